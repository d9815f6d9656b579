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


# Paper 003 (reverse k-NN labeling), Table 1 ("Ours [general]" and "[end2end]" rows: T = 1, k = 1) and the local-DP
# results quoted in its Section 3.3 (end-to-end clustering, s = 10, k = 1, eps = 0.4):
# (dataset, s, mechanism, epsilon) -> (test accuracy %, label accuracy % or None).
TABLE_RKNN = {
    ("MNIST", 40, "laplace", 0.1): (99.1, 98.5),
    ("MNIST", 40, "laplace", 0.04): (98.6, 97.7),
    ("MNIST", 40, "none", math.inf): (99.2, None),
    ("CIFAR-10", 500, "laplace", 1.0): (82.1, 77.1),
    ("CIFAR-10", 500, "laplace", 0.29): (79.4, 73.9),
    ("MNIST", 10, "laplace", 0.01): (98.5, 97.5),  # [end2end] rows: s = 10 on DTI (MNIST) / SCAN (CIFAR-10)
    ("MNIST", 10, "laplace", 0.004): (98.2, 97.3),
    ("CIFAR-10", 10, "laplace", 0.01): (86.1, 85.9),
    ("CIFAR-10", 10, "laplace", 0.005): (86.0, 85.7),
    ("CIFAR-10", 500, "none", math.inf): (82.3, None),
    ("MNIST", 10, "collision", 0.4): (98.5, None),
    ("CIFAR-10", 10, "collision", 0.4): (78.2, None),
}


def rknn_non_private(dataset: str) -> float | None:
    """The non-private student's accuracy paper 003 prints for ``dataset`` (Table 1, [general]), as a share."""
    printed = [v[0] for (d, _, m, _), v in TABLE_RKNN.items() if d == dataset and m == "none"]
    return max(printed) / 100 if printed else None


def table_rknn(dataset: str, s: int, mechanism: str, epsilon: float):
    """(test accuracy %, label accuracy %) printed in paper 003 for this setting, or None."""
    return TABLE_RKNN.get((dataset, s, mechanism, epsilon))


# Paper 002, Table 3 (identical in 000 and 002): (dataset, N, answer) -> accuracy %.
TABLE3 = {
    ("FEMNIST", 5, "logits"): 74.99,
    ("FEMNIST", 5, "softmax"): 75.02,
    ("FEMNIST", 5, "argmax"): 75.58,
    ("FEMNIST", 10, "logits"): 80.74,
    ("FEMNIST", 10, "softmax"): 80.64,
    ("FEMNIST", 10, "argmax"): 81.58,
    ("CIFAR-10", 5, "logits"): 69.79,
    ("CIFAR-10", 5, "softmax"): 70.02,
    ("CIFAR-10", 5, "argmax"): 70.01,
    ("CIFAR-10", 10, "logits"): 74.55,
    ("CIFAR-10", 10, "softmax"): 74.88,
    ("CIFAR-10", 10, "argmax"): 75.12,
}
# Table 4: (dataset, setting) -> accuracy % (N = 10; the IID cells equal Table 3's argmax N = 10 cells).
TABLE4 = {
    ("FEMNIST", "IID"): 81.58,
    ("FEMNIST", "non-IID"): 78.36,
    ("CIFAR-10", "IID"): 75.12,
    ("CIFAR-10", "non-IID"): 53.18,
}
# Table 5 (002 only): (dataset, k, sampling) -> accuracy %.
TABLE5 = {
    ("FEMNIST", 300, "with_replacement"): 93.56,
    ("FEMNIST", 300, "without_replacement"): 93.63,
    ("CIFAR-10", 60, "with_replacement"): 81.58,
    ("CIFAR-10", 60, "without_replacement"): 81.13,
}
# Paper 003, Figure 2(d): the only printed points, Collision at epsilon = 0.4 (Section 3.3), test accuracy %.
FIGURE_RKNN_LOCAL = {("MNIST", "collision", 0.4): 98.5, ("CIFAR-10", "collision", 0.4): 78.2}

# Paper 004 (LDP-DL), Table 1: (approach, dataset, epsilon) -> accuracy %.  DP-SGD and DP-FL are quoted
# from the paper (not run here); LDP-DL and PATE are run (PATE in two arms: on LDP-DL's teachers, and on
# its own).  The papers' teachers (Section 4; SPECS.md 4.4): what each run's teacher_model stands in for.
TEACHERS_LDPDL = {
    "LDP-DL": "an ImageNet-pretrained ResNet50 fine-tuned on the owner's 4,000 records",
    "PATE": "PATE's own, run with its authors' code: CNNs trained from scratch on the disjoint shards",
}
TABLE_LDPDL = {
    ("LDP-DL", "CIFAR-10", 5.0): 77.5,
    ("LDP-DL", "CIFAR-10", 8.0): 79.7,
    ("LDP-DL", "MNIST", 5.0): 98.1,
    ("LDP-DL", "MNIST", 8.0): 98.8,
    ("LDP-DL", "Fashion-MNIST", 5.0): 83.4,
    ("LDP-DL", "Fashion-MNIST", 8.0): 85.7,
    ("DP-SGD", "CIFAR-10", 8.0): 73.0,
    ("DP-SGD", "MNIST", 8.0): 97.0,
    ("PATE", "CIFAR-10", 5.0): 73.6,
    ("PATE", "CIFAR-10", 8.0): 76.0,
    ("PATE", "MNIST", 5.0): 97.7,
    ("PATE", "MNIST", 8.0): 98.2,
    ("PATE", "Fashion-MNIST", 5.0): 81.5,
    ("PATE", "Fashion-MNIST", 8.0): 84.7,
    ("DP-FL", "CIFAR-10", 5.0): 75.9,
    ("DP-FL", "CIFAR-10", 8.0): 78.7,
    ("DP-FL", "MNIST", 5.0): 96.4,
    ("DP-FL", "MNIST", 8.0): 97.2,
    ("DP-FL", "Fashion-MNIST", 5.0): 82.6,
    ("DP-FL", "Fashion-MNIST", 8.0): 83.6,
}

# Paper 001 (LDP-FL), Table 1: (dataset, epsilon, range) -> accuracy %.  Fixed ranges (c, r) = (0, 0.075)
# MNIST, (0, 0.015) Fashion-MNIST, (0, 1) CIFAR-10; clients 100 / 200 / 500.
TABLE_LDPFL = {
    ("MNIST", 5.0, "fixed"): 96.34,
    ("MNIST", 5.0, "adaptive"): 96.06,
    ("MNIST", 10.0, "fixed"): 96.39,
    ("MNIST", 10.0, "adaptive"): 96.11,
    ("Fashion-MNIST", 5.0, "fixed"): 85.95,
    ("Fashion-MNIST", 5.0, "adaptive"): 87.54,
    ("Fashion-MNIST", 10.0, "fixed"): 86.10,
    ("Fashion-MNIST", 10.0, "adaptive"): 87.57,
    ("CIFAR-10", 5.0, "fixed"): 13.54,
    ("CIFAR-10", 5.0, "adaptive"): 58.89,
    ("CIFAR-10", 10.0, "fixed"): 14.28,
    ("CIFAR-10", 10.0, "adaptive"): 60.37,
}
# Noise-free accuracy implied by the paper's introduction (LDP-FL's accuracy + its stated loss): SPECS 2.4.
NOISE_FREE_LDPFL = {"MNIST": 97.21, "Fashion-MNIST": 87.58, "CIFAR-10": 62.55}
# Paper 001's setting per dataset (its Section 5; SPECS.md 2.1): clients, each with train / clients records
# (IID), rounds, plain SGD's learning rate, test records (the standard test split), 10 repeats averaged;
# model sizes, batch size and local epochs are not stated.
LDPFL_SETTING = {
    "MNIST": {"clients": 100, "records": 600, "rounds": 10, "lr": 0.03, "model": "a two-layer CNN", "test": 10000},
    "Fashion-MNIST": {
        "clients": 200,
        "records": 300,
        "rounds": 15,
        "lr": 0.03,
        "model": "a two-layer CNN",
        "test": 10000,
    },
    "CIFAR-10": {"clients": 500, "records": 100, "rounds": 15, "lr": 0.015, "model": "a small VGG", "test": 10000},
}
LDPFL_REPEATS = 10
# Figure 5's printed points: (dataset, epsilon) -> accuracy %.
FIGURE_LDPFL_EPSILON = {("MNIST", 1.0): 96.24, ("Fashion-MNIST", 4.0): 86.26, ("CIFAR-10", 10.0): 61.46}
