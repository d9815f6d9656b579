"""Vocabularies, defined once: the config schema, the rules' wildcard constraints and the code use these.

``config.schema.yaml`` refers to them as ``{$vocab: NAME}`` (see :func:`pipelib.config.schema`).
"""

DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100", "femnist", "femnist_letters")
SPLITS = ("train", "test")
SCHEMES = ("iid", "writer", "subclass", "dirichlet")
TEST_SOURCES = ("test_split", "split_range", "writer_holdout")
LABEL_COLUMNS = ("label", "fine_label", "coarse_label")
DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "bf16")  # training precision (pipelib.train.loop.set_precision)
# Where a mechanism's randomness comes from: derived from the seed (reproducible) or the OS (secret).
RANDOMNESS = ("seeded", "entropy")

# NFDP (paper 002): how a party draws its k records.
SAMPLINGS = ("with_replacement", "without_replacement")
# FedMD: what a party releases per public query (paper 002 Table 3).
ANSWERS = ("logits", "softmax", "argmax")
# FedMD rows: the method part of a row's path (np, nfdp-<sampling>-k<k>, ldp-<sampling>-k<k>).
FEDMD_KINDS = ("np", "nfdp", "ldp")

# Distillation-stage mechanisms: central ones run in the curator's job, local ones in each party's job.
# gnmax (Gaussian noise on the vote counts, only their argmax released) is PATE's curator; the reverse
# k-NN rows take the others (RKNN_MECHANISMS).
CENTRAL_MECHANISMS = ("none", "laplace", "gnmax")
LOCAL_MECHANISMS = ("rr", "collision")
MECHANISMS = CENTRAL_MECHANISMS + LOCAL_MECHANISMS
RKNN_MECHANISMS = tuple(m for m in MECHANISMS if m != "gnmax")
# LDP-DL (paper 004): each data owner's sanitizer of its teacher's soft label.
SOFT_LABEL_MECHANISMS = ("pm", "duchi", "laplacebox")
# LDP-FL (paper 001): a federated client's perturbation of the weights it uploads.
WEIGHT_MECHANISMS = ("twopoint",)
# Distillation-stage teachers (what a party answers) and representation encoders.
TEACHERS = ("rknn", "pate")
ENCODER_KINDS = ("hog", "simclr", "umap", "scan")

_W = r"-[1-9][0-9]*"
# the architectures pipelib.train.models builds, by name (a wildcard constraint: Snakemake reads it)
ARCH_PATTERN = (
    rf"cnn2{_W}{_W}-d0\.[0-9]+|cnn3{_W}{_W}{_W}-d0\.[0-9]+|resnet(18|34|50)|fedcnn{_W}{_W}{_W}|vgg{_W}{_W}{_W}{_W}"
)
