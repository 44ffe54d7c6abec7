"""The arena in a browser: pages, the JSON API and the replay viewer."""
