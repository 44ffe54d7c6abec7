"""The arena in a browser: server-rendered pages, a read-only JSON API and live tables.

An ASGI app (Starlette) served by Hypercorn's trio worker inside ``arena serve``. Every read
goes through the gRPC API's own handlers (``arena.web.calls``), so a page shows exactly what
``GetStandings``/``WatchMatch``/… would show a stranger: no second copy of their rules.
"""
