import numpy as np
import pandas as pd

import backtrader as bt


class NumpyFiles(bt.Strategy):
    def __init__(self):
        pd.read_csv("/etc/passwd")
        np.load("/etc/passwd")
        np.ctypeslib.load_library("libc", "/lib")
