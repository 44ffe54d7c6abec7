"""Fitted weights of Mau-Mau's luck features (``luck.LUCK_FEATURES``), in tally points.

Written by ``benchmarks/fit_mau_mau_luck.py`` from 500 duplicate sets of self-play (out of
sample the luck took 2.5% of the tally margins' variance); do not edit by hand.
"""

WEIGHTS: tuple[float, ...] = (
    -3.101,  # draw 2
    0.405,  # draw 3
    -3.101,  # draw 4
    1.701,  # draw 5
    -4.201,  # draw 6
    1.260,  # draw 7
    13.528,  # draw 8
    1.758,  # draw 9
    3.630,  # draw T
    -17.498,  # draw J
    -3.828,  # draw Q
    -0.523,  # draw K
    9.970,  # draw A
    -2.540,  # draw 2 on a spade start
    1.124,  # draw 3 on a spade start
    4.466,  # draw 4 on a spade start
    -9.641,  # draw 5 on a spade start
    1.793,  # draw 6 on a spade start
    6.719,  # draw 7 on a spade start
    -3.728,  # draw 8 on a spade start
    9.264,  # draw 9 on a spade start
    7.244,  # draw T on a spade start
    -15.959,  # draw J on a spade start
    8.624,  # draw Q on a spade start
    0.385,  # draw K on a spade start
    -7.751,  # draw A on a spade start
    12.766,  # draw 2 holding 1-2
    2.541,  # draw 3 holding 1-2
    0.589,  # draw 4 holding 1-2
    3.438,  # draw 5 holding 1-2
    5.803,  # draw 6 holding 1-2
    -1.081,  # draw 7 holding 1-2
    -0.401,  # draw 8 holding 1-2
    -0.437,  # draw 9 holding 1-2
    -7.434,  # draw T holding 1-2
    -17.427,  # draw J holding 1-2
    4.172,  # draw Q holding 1-2
    0.723,  # draw K holding 1-2
    -3.252,  # draw A holding 1-2
    -2.459,  # draw playable
    2.051,  # draw suit held
    -6.019,  # deal 2
    -5.107,  # deal 3
    6.380,  # deal 4
    16.264,  # deal 5
    -0.688,  # deal 6
    -1.905,  # deal 7
    3.972,  # deal 8
    1.524,  # deal 9
    -4.821,  # deal T
    -18.477,  # deal J
    3.249,  # deal Q
    -2.427,  # deal K
    8.053,  # deal A
    -0.192,  # deal 2 on a spade start
    11.241,  # deal 3 on a spade start
    -12.602,  # deal 4 on a spade start
    -18.203,  # deal 5 on a spade start
    -8.419,  # deal 6 on a spade start
    22.936,  # deal 7 on a spade start
    14.811,  # deal 8 on a spade start
    -1.831,  # deal 9 on a spade start
    9.516,  # deal T on a spade start
    -16.428,  # deal J on a spade start
    2.786,  # deal Q on a spade start
    8.788,  # deal K on a spade start
    -12.404,  # deal A on a spade start
)
