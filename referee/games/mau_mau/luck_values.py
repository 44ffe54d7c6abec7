"""Fitted weights of Mau-Mau's luck features (``luck.FEATURES``), in tally points.

Written by ``benchmarks/fit_mau_mau_luck.py``; do not edit by hand.
"""

WEIGHTS: tuple[float, ...] = (0.0,) * 67
