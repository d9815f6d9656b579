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
            "none" if LdpflRun.of(wc).spec is None else config["privacy"]["randomness"]
        ),
        preset=config["preset"],
        # progress is saved here after every round; a killed or pre-empted job resumes from it
        checkpoint=lambda wc: res(
            f"ldpfl/{wc.scenario}/{wc.flmech}/f{wc.frac}-m{wc.rounds}/resume.pt"
        ),
    script:
        "../scripts/ldpfl.py"
