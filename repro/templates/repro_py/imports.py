
import cmath
import math
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple  # noqa: F401 (CaseModule's annotations, where ofi runs)

import torch
from torch import Tensor  # noqa: F401
