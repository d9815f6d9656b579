"""FedMD mechanics: models, the training loop, answers and their aggregation, LDP noise calibration,
determinism and resuming after a kill."""

import copy

import pytest
import torch

from pipelib.methods import fedmd
from pipelib.methods.rounds import run_rounds, wall_seconds
from pipelib.train import checkpoint, loop, models
from pipelib.vocab import ANSWERS

FEDMD_ARCHS = [
    "cnn2-128-256-d0.2",
    "cnn2-128-384-d0.2",
    "cnn2-128-512-d0.2",
    "cnn2-256-256-d0.3",
    "cnn2-256-512-d0.4",
    "cnn3-64-128-256-d0.2",
    "cnn3-64-128-192-d0.2",
    "cnn3-128-192-256-d0.2",
    "cnn3-128-128-128-d0.3",
    "cnn3-128-128-192-d0.3",
]


@pytest.mark.parametrize("arch", FEDMD_ARCHS)
@pytest.mark.parametrize("shape", [(1, 28, 28), (3, 32, 32)])
def test_fedmd_architectures_build(arch, shape):
    m = models.build(arch, shape, 16)
    assert m(torch.zeros(2, *shape)).shape == (2, 16)
    assert m.arch.name == arch and m.classifier.bias is None


def test_arch_names_are_checked():
    assert models.parse_arch("cnn3-8-8-16-d0.25").widths == (8, 8, 16)
    with pytest.raises(ValueError, match="bad architecture name"):
        models.parse_arch("resnet19")


@pytest.mark.parametrize("arch", ["resnet18", "resnet50"])
@pytest.mark.parametrize("shape", [(1, 28, 28), (3, 32, 32)])
def test_resnets_build_from_scratch_for_small_images(arch, shape):
    m = models.build(arch, shape, 10)
    assert m(torch.zeros(2, *shape)).shape == (2, 10) and m.arch.name == arch
    assert m.features.conv1.in_channels == shape[0] and m.features.conv1.stride == (1, 1)
    groups = models.optimizer(m, 1e-3).param_groups  # every parameter trained, the penalty on fc's weights only
    assert sum(len(g["params"]) for g in groups) == len(list(m.parameters()))
    assert groups[1]["params"] == [m.classifier.weight]


def test_optimizer_penalises_only_the_classifier():
    m = models.build("cnn2-4-8-d0.2", (1, 28, 28), 16)
    groups = models.optimizer(m, 1e-3).param_groups
    assert groups[1]["weight_decay"] == models.classifier_weight_decay and groups[0]["weight_decay"] == 0
    assert groups[1]["params"] == [m.classifier.weight]


def toy_data(n=256, seed=0, classes=4):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    x = torch.randint(0, 60, (n, 1, 16, 16), generator=g, dtype=torch.uint8)
    for c in range(classes):  # class c: a bright square in quadrant c
        r, col = divmod(c, 2)
        x[y == c, :, r * 8 : (r + 1) * 8, col * 8 : (col + 1) * 8] = 250
    return x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2), y


def test_fit_learns_and_keeps_channels_last():
    x, y = toy_data()
    assert x.is_contiguous(memory_format=torch.channels_last)
    loop.seed_everything(0)
    m = loop.prepare(models.build("cnn2-8-16-d0.1", (1, 16, 16), 4), "cpu")
    gen = torch.Generator().manual_seed(0)
    before = loop.accuracy(m, x, y)
    stats = loop.fit(m, models.optimizer(m, 1e-2), (x, y), loop.CROSS_ENTROPY, 5, 32, gen)
    assert loop.accuracy(m, x, y) > max(0.9, before) and stats["images"] == 5 * 256


def test_accuracy_over_task_outputs():
    class Fixed(torch.nn.Module):
        n_classes = 4

        def forward(self, x):
            return torch.tensor([[5.0, 0.0, 1.0, 2.0]]).repeat(len(x), 1)

    x, y = torch.zeros(3, 1, 2, 2, dtype=torch.uint8), torch.tensor([3, 3, 2])
    assert loop.accuracy(Fixed(), x, y) == 0.0  # the public output 0 wins over all outputs
    assert loop.accuracy(Fixed(), x, y, outputs=(2, 4)) == pytest.approx(2 / 3)


def test_losses():
    logits = torch.tensor([[2.0, 0.0], [0.0, 2.0]])
    assert loop.l1(logits, torch.zeros(2, 2)) == pytest.approx(1.0)
    onehot = torch.eye(2)
    assert loop.soft_ce(logits, onehot) == pytest.approx(float(loop.hard_ce(logits, torch.tensor([0, 1]))))


@pytest.mark.parametrize("v", [[2.0, 0.0], [0.5, 0.5], [0.3, 0.3, 0.3], [-1.0, 3.0, 0.5], [100.0, -50.0, 20.0, 1.0]])
def test_project_simplex(v):
    t = torch.tensor([v])
    p = fedmd.project_simplex(t)[0]
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0, abs=1e-6)
    # optimality (KKT): p_i = max(v_i - theta, 0) for one theta
    theta = (t[0] - p)[p > 0]
    assert torch.allclose(theta, theta[0].expand_as(theta), atol=1e-6)
    assert all(float(t[0, i] - theta[0]) <= 1e-6 for i in range(len(v)) if p[i] == 0)


def test_projection_is_identity_on_the_simplex():
    probs = torch.softmax(torch.randn(50, 16), 1)
    assert torch.allclose(fedmd.project_simplex(probs), probs, atol=1e-6)


class StubModel(torch.nn.Module):
    """Emits fixed logits, to test answers and aggregation without training."""

    def __init__(self, logits):
        super().__init__()
        self.logits, self.n_classes = torch.tensor(logits), len(logits)

    def forward(self, x):
        return self.logits.repeat(len(x), 1)


def party_with(logits, answer, sigma=0.0, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return fedmd.Party(
        0, StubModel(logits), None, (None, None), answer, gen, (sigma, torch.Generator().manual_seed(seed))
    )


@pytest.mark.parametrize("answer", ANSWERS)
def test_answers_and_aggregation(answer):
    x = torch.zeros(5, 1, 2, 2, dtype=torch.uint8)
    logits = [[1.0, 2.0, 0.0], [3.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    answers = [party_with(row, answer).answer(x, 8) for row in logits]
    server = fedmd.Server(100, 5, answer, seed=0)
    agg = server.aggregate(answers)
    if answer == "logits":
        expected = torch.tensor(logits).mean(0)
    elif answer == "softmax":
        expected = torch.softmax(torch.tensor(logits), 1).mean(0)
    else:  # one vote per party: classes 1, 0, 2
        expected = torch.tensor([1 / 3, 1 / 3, 1 / 3])
    assert torch.allclose(agg, expected.expand(5, 3), atol=1e-6)


def test_task_outputs_answer_and_digest_only_the_task():
    """answer_outputs: task: a party answers a distribution over the task's outputs only, and its digest
    loss gives the public classes' outputs no gradient."""
    party = fedmd.Party(
        0, StubModel([5.0, 4.0, 1.0, 2.0, 0.0]), None, (None, None), "softmax", torch.Generator(), outputs=(2, 5)
    )
    out = party.answer(torch.zeros(4, 1, 2, 2, dtype=torch.uint8), 8)
    assert out.shape == (4, 3) and torch.allclose(out[0], torch.softmax(torch.tensor([1.0, 2.0, 0.0]), 0))
    m = loop.prepare(models.build("cnn2-4-8-d0.1", (1, 16, 16), 5), "cpu")
    real = fedmd.Party(0, m, models.optimizer(m, 1e-2), (None, None), "softmax", torch.Generator(), outputs=(2, 5))
    x, _ = toy_data(8)
    loss = real.digest_objective.loss(m(loop.scale(x)), torch.full((8, 3), 1 / 3))
    loss.backward()
    grad = m.classifier.weight.grad
    assert grad[:2].abs().max() == 0 and grad[2:].abs().max() > 0


def test_per_phase_optimizers_keep_their_own_state():
    """optimizers: per_phase (FedMD's code): digesting steps one Adam, the party's own records another."""
    m = loop.prepare(models.build("cnn2-4-8-d0.1", (1, 16, 16), 4), "cpu")
    x, y = toy_data(20)
    own, digest = models.optimizer(m, 1e-2), models.optimizer(m, 1e-2)
    party = fedmd.Party(0, m, (own, digest), (x, y), "softmax", torch.Generator().manual_seed(0))
    party.digest(x, torch.full((20, 4), 0.25), 1, 10)
    assert len(digest.state) > 0 and len(own.state) == 0
    party.train_own(1, 10)
    steps = {id(o): next(iter(o.state.values()))["step"].item() for o in (own, digest)}
    assert steps == {id(own): 2, id(digest): 2}
    assert party.state()["digest_opt"] is not None
    shared = fedmd.Party(0, m, own, (x, y), "softmax", torch.Generator())
    assert shared.digest_opt is shared.opt and shared.state()["digest_opt"] is None


def test_loop_settings_are_checked_and_bn_momentum_is_set():
    kw = dict(
        rounds=1,
        public_per_round=1,
        init_epochs=1,
        digest_epochs=1,
        revisit_epochs=1,
        init_batch=1,
        digest_batch=1,
        revisit_batch=1,
    )
    with pytest.raises(ValueError, match="fedmd.optimizers = 'both'"):
        fedmd.Schedule(**kw, optimizers="both")
    with pytest.raises(ValueError, match="answer_outputs"):
        fedmd.Schedule(**kw, answer_outputs="public")
    m = models.build("cnn3-4-4-8-d0.1", (1, 16, 16), 4)
    fedmd.set_bn_momentum(m, 0.01)
    norms = [b for b in m.modules() if isinstance(b, torch.nn.BatchNorm2d)]
    assert len(norms) == 3 and all(b.momentum == 0.01 for b in norms)


def test_ldp_answers_carry_gaussian_noise_of_sigma():
    p = party_with([0.0, 0.0, 10.0], "argmax", sigma=3.0)
    out = p.answer(torch.zeros(20000, 1, 2, 2, dtype=torch.uint8), 4096)
    noise = out - torch.tensor([0.0, 0.0, 1.0])
    assert noise.mean().abs() < 0.05 and noise.std() == pytest.approx(3.0, rel=0.02)
    with pytest.raises(ValueError, match="bounded answers"):
        party_with([0.0, 1.0], "logits", sigma=1.0)


def test_a_nan_answer_is_released_as_the_uniform_answer_under_the_gaussian():
    """FedMD-LDP: a diverged party's NaN answer rows become 1/C before the noise (a NaN passes through the
    Gaussian unprotected); finite rows are untouched; noise-free answers are left as they are."""
    p = party_with([float("nan"), 0.0, 1.0], "softmax", sigma=1e-9)
    out = p.answer(torch.zeros(4, 1, 2, 2, dtype=torch.uint8), 8)
    assert torch.allclose(out, torch.full((4, 3), 1 / 3), atol=1e-6)
    rows = torch.tensor([[0.2, 0.8], [float("nan"), 0.1]])
    assert torch.equal(fedmd.bounded_answers(rows)[0], rows[0]) and torch.equal(
        fedmd.bounded_answers(rows)[1], torch.tensor([0.5, 0.5])
    )
    assert torch.isnan(party_with([float("nan"), 0.0], "softmax").answer(torch.zeros(1, 1, 2, 2), 8)).all()


def test_server_draws_are_fixed_per_round_and_bounded():
    s = fedmd.Server(1000, 50, "softmax", seed=3)
    assert (s.draw(2) == s.draw(2)).all() and not (s.draw(1) == s.draw(2)).all()
    assert len(set(s.draw(0).tolist())) == 50
    with pytest.raises(ValueError, match="exceeds the public pool"):
        fedmd.Server(10, 50, "softmax", seed=0)


# ---------------------------------------------------------------------------- LDP answers


def test_releases_count_the_rounds_that_are_sent():
    s = fedmd.Schedule(
        rounds=20,
        public_per_round=5000,
        init_epochs=1,
        digest_epochs=1,
        revisit_epochs=1,
        init_batch=1,
        digest_batch=1,
        revisit_batch=1,
    )
    assert s.releases == 100000  # paper 002 Figure 2(c): T = 100,000 queries in 20 rounds


# ---------------------------------------------------------------------------- determinism / resume


def make_run(tmp_path, ckpt=None, stop_after=None, answer="softmax", sigma=0.0, per_phase=False, outputs=None):
    loop.seed_everything(7)
    x_pub, _ = toy_data(300, seed=1)
    x_test, y_test = toy_data(100, seed=2)
    parties = []
    for i in range(3):
        x, y = toy_data(40, seed=10 + i)
        m = loop.prepare(models.build(["cnn2-4-8-d0.1", "cnn3-4-4-8-d0.1"][i % 2], (1, 16, 16), 4), "cpu")
        opts = (models.optimizer(m, 1e-2), models.optimizer(m, 1e-2)) if per_phase else models.optimizer(m, 1e-2)
        parties.append(
            fedmd.Party(
                i,
                m,
                opts,
                (x, y),
                answer,
                torch.Generator().manual_seed(i),
                (sigma, torch.Generator().manual_seed(100 + i)),
                outputs,
            )
        )
    schedule = fedmd.Schedule(
        rounds=3,
        public_per_round=60,
        init_epochs=2,
        digest_epochs=1,
        revisit_epochs=1,
        init_batch=16,
        digest_batch=32,
        revisit_batch=5,
    )

    def stop(rows):
        if stop_after is not None and rows[0]["round"] == stop_after:
            raise KeyboardInterrupt("killed")

    protocol = fedmd.FedMD(parties, fedmd.Server(300, 60, answer, seed=5), x_pub, x_test, y_test, schedule, (0, 4))
    return run_rounds(protocol, ckpt, "f", stop)


@pytest.mark.parametrize("answer,sigma", [("softmax", 0.0), ("argmax", 0.5), ("logits", 0.0)])
def test_same_seed_same_history(tmp_path, answer, sigma):
    a = make_run(tmp_path, answer=answer, sigma=sigma)
    b = make_run(tmp_path, answer=answer, sigma=sigma)
    assert [h["accuracy"] for h in a] == [h["accuracy"] for h in b]
    assert sorted({h["round"] for h in a}) == [0, 1, 2, 3]


@pytest.mark.parametrize("per_phase,outputs", [(False, None), (True, (2, 4))])
def test_killed_run_resumes_with_identical_results(tmp_path, per_phase, outputs):
    kw = {"answer": "argmax", "sigma": 0.5, "per_phase": per_phase, "outputs": outputs}
    full = make_run(tmp_path, **kw)
    ckpt = tmp_path / "resume.pt"
    with pytest.raises(KeyboardInterrupt):
        make_run(tmp_path, ckpt=ckpt, stop_after=1, **kw)
    assert ckpt.exists()
    resumed = make_run(tmp_path, ckpt=ckpt, **kw)
    assert [(h["round"], h["party"], h["accuracy"]) for h in resumed] == [
        (h["round"], h["party"], h["accuracy"]) for h in full
    ]
    # the rounds before the kill keep their wall time: a resumed row reports its whole compute time
    assert all(h["round_seconds"] > 0 for h in resumed)
    assert wall_seconds(resumed) == pytest.approx(sum({h["round"]: h["round_seconds"] for h in resumed}.values()))
    after_kill = {h["round"]: h["round_seconds"] for h in resumed if h["round"] >= 2}  # one time per round
    assert wall_seconds(resumed) > sum(after_kill.values()) > 0


def test_resumable_epochs_continue_where_a_killed_job_stopped(tmp_path):
    """The epoch loop of pre-training, encoders, students and the centralized baseline."""
    x, y = toy_data(64)

    def run(ckpt, stop_at=None):
        gen = loop.seed_everything(3)
        m = loop.prepare(models.build("cnn2-4-8-d0.1", (1, 16, 16), 4), "cpu")
        opt = models.optimizer(m, 1e-2)
        history = []
        for epoch in checkpoint.resumable_epochs(4, checkpoint.Resume(ckpt, "fp"), m, opt, gen, history):
            if epoch == stop_at:
                raise KeyboardInterrupt("killed")
            history.append(loop.fit(m, opt, (x, y), loop.CROSS_ENTROPY, 1, 16, gen)["loss"])
        return history, [p.detach().clone() for p in m.parameters()]

    full, params = run(None)
    ckpt = tmp_path / "job.resume.pt"
    with pytest.raises(KeyboardInterrupt):
        run(ckpt, stop_at=2)
    resumed, params2 = run(ckpt)
    assert resumed == full and all(torch.equal(a, b) for a, b in zip(params, params2))
    assert checkpoint.load_checkpoint(ckpt, "another config") is None


def test_progress_lines_carry_rate_and_eta(monkeypatch, capfd):
    from pipelib.train import loop

    monkeypatch.setenv("PIPELIB_PROGRESS_SECONDS", "0")
    with loop.progress(1000, "job") as p:
        p.advance(250)
    err = capfd.readouterr().err
    assert "job: 25 % of 1,000 image-passes" in err and "ETA" in err and "done" in err


# ------------------------------------------------------------------------- captured steps (issue 56)


@pytest.fixture
def static_graphs(monkeypatch):
    """The captured-step path's buffers and bookkeeping without the CUDA capture (CPU), counting its steps."""
    taken = []
    step = loop.CapturedSteps.step
    monkeypatch.setattr(loop.CapturedSteps, "step", lambda self, idx: taken.append(len(idx)) or step(self, idx))
    loop.set_graphs("static", "cpu")
    yield taken
    loop.set_graphs("off", "cpu")


def test_graph_modes_are_checked_and_auto_is_off_on_a_cpu():
    assert loop.set_graphs("auto", "cpu") == "off"
    with pytest.raises(ValueError, match="PIPELIB_CUDA_GRAPHS='yes'; allowed: auto, off, static"):
        loop.set_graphs("yes", "cpu")
    assert loop.set_graphs("off", "cpu") == "off" and "CUDA graphs" not in loop.where("cpu")["hardware"]
    loop._GRAPHS["replayed"] = True  # as a replay leaves it: the row says so, the planner's cache key does not
    try:
        assert loop.where("cpu")["hardware"].endswith(", training steps replayed as CUDA graphs")
        assert "CUDA graphs" not in loop.hardware("cpu")
    finally:
        loop.set_graphs("off", "cpu")


@pytest.mark.parametrize("per_phase,outputs", [(False, None), (True, (2, 4))])
def test_parties_on_captured_steps_train_exactly_as_on_eager_steps(tmp_path, static_graphs, per_phase, outputs):
    """Every step through static buffers, warm-up steps, per-size slots and the digest's new subset each round
    (odd batch sizes: 40 records at 16 and 5, 60 public at 32), one optimizer or two: the same numbers."""
    kw = {"answer": "argmax", "sigma": 0.5, "per_phase": per_phase, "outputs": outputs}
    static = make_run(tmp_path, **kw)
    loop.set_graphs("off", "cpu")
    taken = len(static_graphs)
    eager = make_run(tmp_path, **kw)
    assert len(static_graphs) == taken > 3 * (loop.CapturedSteps.WARMUP + 1)  # the eager run took none
    assert {16, 5, 32} == set(static_graphs)  # full batches only: a remainder (8, 28) runs eagerly
    key = [(h["round"], h["party"], h["accuracy"]) for h in eager]
    assert [(h["round"], h["party"], h["accuracy"]) for h in static] == key


def test_captured_steps_are_kept_per_optimizer_and_renewed_after_a_restore(static_graphs):
    x, y = toy_data(40)
    m = loop.prepare(models.build("cnn2-4-8-d0.1", (1, 16, 16), 4), "cpu")
    opt = models.optimizer(m, 1e-2)
    loop.fit(m, opt, (x, y), loop.CROSS_ENTROPY, 2, 16, torch.Generator(), graph=True)
    first = loop.CapturedSteps.of(m, opt, loop.CROSS_ENTROPY, x, y)
    assert loop.CapturedSteps.of(m, opt, loop.CROSS_ENTROPY, *toy_data(40, seed=3)) is first  # new data, same slots
    assert torch.equal(first.x, toy_data(40, seed=3)[0])  # ... loaded into the static copies
    assert loop.CapturedSteps.of(m, opt, loop.CROSS_ENTROPY, *toy_data(30)) is not first  # another shape
    m.load_state_dict({k: v.clone() for k, v in m.state_dict().items()})  # in place: the graphs stay valid
    assert loop.CapturedSteps.of(m, opt, loop.CROSS_ENTROPY, x, y) is first
    opt.load_state_dict(copy.deepcopy(opt.state_dict()))  # a checkpoint's state: the graphs held the old tensors
    second = loop.CapturedSteps.of(m, opt, loop.CROSS_ENTROPY, x, y)
    assert second is not first
    opt.param_groups[0]["lr"] = 0.5  # baked into a captured step
    third = loop.CapturedSteps.of(m, opt, loop.CROSS_ENTROPY, x, y)
    assert third is not second
    if loop.set_precision("bf16", "cpu") == "bf16":  # autocast, too, is baked into a captured step
        try:
            assert loop.CapturedSteps.of(m, opt, loop.CROSS_ENTROPY, x, y) is not third
        finally:
            loop.set_precision("fp32", "cpu")


def test_a_checkpoint_of_captured_steps_resumes_eagerly_on_a_cpu():
    """A graph run's Adam is capturable with its step counts on the GPU; its checkpoint (portable_state) is
    not, so it resumes on any device and with graphs off."""
    x, y = toy_data(40)
    m = loop.prepare(models.build("cnn2-4-8-d0.1", (1, 16, 16), 4), "cpu")
    opt = models.optimizer(m, 1e-2)
    loop.fit(m, opt, (x, y), loop.CROSS_ENTROPY, 1, 16, torch.Generator())
    for group in opt.param_groups:  # as CapturedSteps leaves it
        group["capturable"] = True
    saved = copy.deepcopy(loop.portable_state(opt))
    assert not any(g["capturable"] for g in saved["param_groups"])
    assert all(st["step"].device.type == "cpu" for st in saved["state"].values())
    for state in (saved, copy.deepcopy(opt.state_dict())):
        fresh = models.optimizer(m, 1e-2)
        fresh.load_state_dict(state)
        if state is saved:
            loop.fit(m, fresh, (x, y), loop.CROSS_ENTROPY, 1, 16, torch.Generator())
        else:  # the plain state dict would not resume here
            with pytest.raises((AssertionError, RuntimeError)):
                loop.fit(m, fresh, (x, y), loop.CROSS_ENTROPY, 1, 16, torch.Generator())
