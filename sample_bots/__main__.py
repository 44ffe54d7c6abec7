"""``python -m sample_bots KIND --listen HOST:PORT``."""

from sample_bots.serve import main

main()
