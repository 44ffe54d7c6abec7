"""The arena: local bot processes, the command line, and (later) ladders on top of the referee."""
