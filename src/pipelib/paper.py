"""Numbers transcribed from the papers, for side-by-side comparison (never used to compute anything)."""

import math

# Paper 002 (FedMD-NFDP), Table 2: (dataset, method, k) -> (accuracy %, epsilon, delta) as printed.
# epsilon is printed with log10 (see pipelib.privacy); the k = 16 rows' epsilon/delta equal k = 18.
TABLE2 = {
    ("FEMNIST", "FedMD-NP", 2880): (96.15, math.inf, 1.0),
    ("FEMNIST", "Centralized", 2880): (98.00, math.inf, 1.0),
    ("FEMNIST", "FedMD-NFDP", 16): (80.64, 0.0027, 0.0062),
    ("FEMNIST", "FedMD-NFDP", 60): (88.06, 0.0090, 0.0206),
    ("FEMNIST", "FedMD-NFDP", 300): (93.56, 0.0452, 0.0989),
    ("FEMNIST", "FedMD-NFDP", 2880): (96.63, 0.4342, 0.6321),
    ("CIFAR-10", "FedMD-NP", 300): (86.88, math.inf, 1.0),
    ("CIFAR-10", "Centralized", 300): (88.83, math.inf, 1.0),
    ("CIFAR-10", "FedMD-NFDP", 16): (74.40, 0.0260, 0.0583),
    ("CIFAR-10", "FedMD-NFDP", 60): (81.58, 0.0867, 0.1815),
    ("CIFAR-10", "FedMD-NFDP", 120): (83.57, 0.1734, 0.3301),
    ("CIFAR-10", "FedMD-NFDP", 300): (87.38, 0.4336, 0.6327),
}


def table2(dataset: str, method: str, k: int | None):
    """(accuracy %, epsilon, delta) printed in paper 002's Table 2 for this row, or None."""
    if method in ("FedMD-NP", "Centralized"):
        k = next((kk for (d, m, kk) in TABLE2 if d == dataset and m == method), None)
    return TABLE2.get((dataset, method, k))
