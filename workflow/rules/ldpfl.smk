# LDP-FL (paper 001) and noise-free federated averaging (pipelib.methods.ldpfl):
#   ldpfl        (federation) one run: every client (its own shard, in code), the shuffler and the server
#   table_ldpfl  (report)     paper 001 Table 1 beside the paper's values
#   figure_p001_* (report)    Figures 3, 4 and 5
# Paths: results/ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/.
wildcard_constraints:
    flmech=LDPFL_RUN.pattern,
    frac=r"[0-9.]+",
    rounds=r"[1-9][0-9]*",


rule ldpfl:
    input:
        assignment=res("partitions/{scenario}/assignment.parquet"),
        private_train=lambda wc: D.scenario_inputs(wc)["private_train"],
        private_test=lambda wc: D.scenario_inputs(wc)["private_test"],
        test=res("partitions/{scenario}/test.parquet"),
    output:
        result=res("ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/result.json"),
        rounds=res("ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/rounds.parquet"),
        releases=res("ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/releases.json"),
        model=res("ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}/model.pt"),
    log:
        res("logs/ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}.log"),
    benchmark:
        res("benchmarks/ldpfl/{scenario}/{flmech}/f{frac}-m{rounds}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: D.LDPFL["threads"]
    resources:
        mem_mb=8000,
        runtime=D.LDPFL["runtime"],
        gpu=LDPFL_GPUS,
    params:
        code=code("ldpfl.py"),
        settings=lambda wc: ldpfl_params(config, wc.scenario),
        precision=D.LDPFL["precision"],
        seed=lambda wc: seed_of(wc.scenario),
        randomness=lambda wc: (
            "none" if wc.flmech == "none" else config["privacy"]["randomness"]
        ),
        preset=config["preset"],
        # progress is saved here after every round; a killed or pre-empted job resumes from it
        checkpoint=lambda wc: res(
            f"ldpfl/{wc.scenario}/{wc.flmech}/f{wc.frac}-m{wc.rounds}/resume.pt"
        ),
    script:
        "../scripts/ldpfl.py"


rule table_ldpfl:
    input:
        D.ldpfl.paths("table"),
    output:
        report(
            res("table_ldpfl.csv"),
            caption="../report/table_ldpfl.rst",
            category="Paper 001",
        ),
    log:
        res("logs/table_ldpfl.log"),
    benchmark:
        res("benchmarks/table_ldpfl.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table_ldpfl.py"),
        entries=[e for e in D.ldpfl.entries() if e["artifact"] == "table"],
    script:
        "../scripts/table_ldpfl.py"


rule figure_p001:
    input:
        unpack(
            lambda wc: (
                {"table": res("table_ldpfl.csv")} if D.ldpfl.paths("table") else {}
            )
        ),
        results=lambda wc: D.ldpfl.p001_paths(wc.p001),
        rounds=lambda wc: [
            p.replace("result.json", "rounds.parquet")
            for p in D.ldpfl.p001_paths(wc.p001)
        ],
    output:
        png=report(
            res("figures/p001_{p001}.png"),
            caption="../report/p001.rst",
            category="Paper 001",
            subcategory="Figures",
        ),
        svg=res("figures/p001_{p001}.svg"),
        data=res("figures/p001_{p001}.csv"),
    log:
        res("logs/figures/p001_{p001}.log"),
    benchmark:
        res("benchmarks/figures/p001_{p001}.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p001.py"),
        figure=lambda wc: wc.p001,
        entries=lambda wc: [
            e
            for e in D.ldpfl.entries()
            if e["artifact"] in D.ldpfl.FIGURE_P001[wc.p001]
        ],
    script:
        "../scripts/figure_p001.py"
