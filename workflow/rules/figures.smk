# Paper 002's Tables 3-5 and the papers' figures: views of the methods' result rows (and closed forms),
# each figure as PNG and SVG with the data it is drawn from (.csv), all registered for
# `snakemake --report`.


rule table3:
    input:
        D.fedmd.runs_of(D.fedmd.table3_entries()),
    output:
        report(res("table3.csv"), caption="../report/table3.rst", category="Paper 002"),
    log:
        res("logs/table3.log"),
    benchmark:
        res("benchmarks/table3.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table3.py"),
        entries=D.fedmd.table3_entries(),
        delta_ref=config["privacy"]["delta_ref"],
    script:
        "../scripts/table3.py"


rule table4:
    input:
        D.fedmd.runs_of(D.fedmd.table4_entries()),
    output:
        report(res("table4.csv"), caption="../report/table4.rst", category="Paper 002"),
    log:
        res("logs/table4.log"),
    benchmark:
        res("benchmarks/table4.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table4.py"),
        entries=D.fedmd.table4_entries(),
        delta_ref=config["privacy"]["delta_ref"],
    script:
        "../scripts/table4.py"


rule table5:
    input:
        D.fedmd.runs_of(D.fedmd.table5_entries()),
    output:
        report(res("table5.csv"), caption="../report/table5.rst", category="Paper 002"),
    log:
        res("logs/table5.log"),
    benchmark:
        res("benchmarks/table5.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table5.py"),
        entries=D.fedmd.table5_entries(),
        delta_ref=config["privacy"]["delta_ref"],
    script:
        "../scripts/table5.py"


rule figure_p002_privacy_vs_parties:
    output:
        png=report(
            res("figures/p002_privacy_vs_parties.png"),
            caption="../report/p002_privacy_vs_parties.rst",
            category="Paper 002",
            subcategory="Figures",
        ),
        svg=res("figures/p002_privacy_vs_parties.svg"),
        data=res("figures/p002_privacy_vs_parties.csv"),
    log:
        res("logs/figures/p002_privacy_vs_parties.log"),
    benchmark:
        res("benchmarks/figures/p002_privacy_vs_parties.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p002_privacy_vs_parties.py"),
        settings=D.P002["figure2abc"],
    script:
        "../scripts/figure_p002_privacy_vs_parties.py"


rule figure_p002_privacy_vs_k:
    output:
        png=report(
            res("figures/p002_privacy_vs_k.png"),
            caption="../report/p002_privacy_vs_k.rst",
            category="Paper 002",
            subcategory="Figures",
        ),
        svg=res("figures/p002_privacy_vs_k.svg"),
        data=res("figures/p002_privacy_vs_k.csv"),
    log:
        res("logs/figures/p002_privacy_vs_k.log"),
    benchmark:
        res("benchmarks/figures/p002_privacy_vs_k.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p002_privacy_vs_k.py"),
        n=D.P002["figure4"]["n"],
    script:
        "../scripts/figure_p002_privacy_vs_k.py"


rule figure_p002_accuracy_vs_parties:
    input:
        D.fedmd.runs_of(D.fedmd.figure2d_entries()),
        table=res("table2.csv"),  # its dataset-level flags (pipelib.report.flags)
    output:
        png=report(
            res("figures/p002_accuracy_vs_parties.png"),
            caption="../report/p002_accuracy_vs_parties.rst",
            category="Paper 002",
            subcategory="Figures",
        ),
        svg=res("figures/p002_accuracy_vs_parties.svg"),
        data=res("figures/p002_accuracy_vs_parties.csv"),
    log:
        res("logs/figures/p002_accuracy_vs_parties.log"),
    benchmark:
        res("benchmarks/figures/p002_accuracy_vs_parties.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p002_accuracy_vs_parties.py"),
        entries=D.fedmd.figure2d_entries(),
        answer=D.P002["figure2d"]["answer"],
    script:
        "../scripts/figure_p002_accuracy_vs_parties.py"


rule table_fedmd_budget:
    input:
        [e["path"] for e in D.ablation.budget_entries()],
        [
            e["path"].replace("result.json", "rounds.parquet")
            for e in D.ablation.budget_entries()
        ],
    output:
        report(
            res("fedmd_budget.csv"),
            caption="../report/fedmd_budget.rst",
            category="Paper 002",
        ),
    log:
        res("logs/table_fedmd_budget.log"),
    benchmark:
        res("benchmarks/table_fedmd_budget.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table_fedmd_budget.py"),
        entries=D.ablation.budget_entries(),
        delta_ref=config["privacy"]["delta_ref"],
    script:
        "../scripts/table_fedmd_budget.py"


rule figure_p002_budget:
    input:
        res("fedmd_budget.csv"),
    output:
        png=report(
            res("figures/p002_budget.png"),
            caption="../report/p002_budget.rst",
            category="Paper 002",
            subcategory="Figures",
        ),
        svg=res("figures/p002_budget.svg"),
        data=res("figures/p002_budget.csv"),
    log:
        res("logs/figures/p002_budget.log"),
    benchmark:
        res("benchmarks/figures/p002_budget.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p002_budget.py"),
    script:
        "../scripts/figure_p002_budget.py"


rule figure_p002_rounds:
    input:
        rounds=res("table2_rounds.parquet"),
    output:
        png=report(
            res("figures/p002_rounds.png"),
            caption="../report/p002_rounds.rst",
            category="Paper 002",
            subcategory="Figures",
        ),
        svg=res("figures/p002_rounds.svg"),
        data=res("figures/p002_rounds.csv"),
    log:
        res("logs/figures/p002_rounds.log"),
    benchmark:
        res("benchmarks/figures/p002_rounds.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p002_rounds.py"),
        k=D.P002["k"],
    script:
        "../scripts/figure_p002_rounds.py"


rule figure_p003_queries_and_neighbours:
    input:
        [e["path"] for e in D.distill.p003_sweep_entries()],
        table=res("table_rknn.csv"),  # its dataset-level flags (pipelib.report.flags)
    output:
        png=report(
            res("figures/p003_queries_and_neighbours.png"),
            caption="../report/p003_queries_and_neighbours.rst",
            category="Paper 003",
            subcategory="Figures",
        ),
        svg=res("figures/p003_queries_and_neighbours.svg"),
        data=res("figures/p003_queries_and_neighbours.csv"),
    log:
        res("logs/figures/p003_queries_and_neighbours.log"),
    benchmark:
        res("benchmarks/figures/p003_queries_and_neighbours.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p003_queries_and_neighbours.py"),
        entries=D.distill.p003_sweep_entries(),
    script:
        "../scripts/figure_p003_queries_and_neighbours.py"


rule figure_p003_local_dp:
    input:
        [e["path"] for e in D.distill.p003_local_entries()],
        table=res("table_rknn.csv"),  # its dataset-level flags (pipelib.report.flags)
    output:
        png=report(
            res("figures/p003_local_dp.png"),
            caption="../report/p003_local_dp.rst",
            category="Paper 003",
            subcategory="Figures",
        ),
        svg=res("figures/p003_local_dp.svg"),
        data=res("figures/p003_local_dp.csv"),
    log:
        res("logs/figures/p003_local_dp.log"),
    benchmark:
        res("benchmarks/figures/p003_local_dp.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("figure_p003_local_dp.py"),
        entries=D.distill.p003_local_entries(),
    script:
        "../scripts/figure_p003_local_dp.py"


rule table_fedmd_ablation:
    input:
        [e["path"] for e in D.ablation.entries()],
        [
            e["path"].replace("result.json", "rounds.parquet")
            for e in D.ablation.entries()
            if "pooled" not in e
        ],
    output:
        report(
            res("fedmd_ablation.csv"),
            caption="../report/fedmd_ablation.rst",
            category="Paper 002",
        ),
    log:
        res("logs/table_fedmd_ablation.log"),
    benchmark:
        res("benchmarks/table_fedmd_ablation.tsv")
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("table_fedmd_ablation.py"),
        entries=D.ablation.entries(),
    script:
        "../scripts/table_fedmd_ablation.py"
