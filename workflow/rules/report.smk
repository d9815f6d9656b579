# Reports: every table and figure (one rule per entry of pipelib.report.registry.VIEWS: the privacy ledger,
# the paper tables as views of the methods' result rows, compare.csv, the claims, the audit's table, each
# figure as PNG and SVG with the data it is drawn from), and the reproduction pages (PAGES), all registered
# for `snakemake --report`.


for view in VIEWS.values():

    rule:
        name:
            view.rule
        input:
            unpack(lambda wc, v=view: v.inputs(D, wc)),
        output:
            **view_outputs(view),
        log:
            view_log(view, "logs"),
        benchmark:
            view_log(view, "benchmarks")
        localrule: True
        conda:
            "../envs/pipelib.yaml"
        threads: 1
        resources:
            mem_mb=view.mem_mb,
            runtime=view.runtime,
        params:
            code=code("view.py", also=(view.module,)),
            registered=view.make.__module__,
            args=lambda wc, v=view: v.args(D, wc),
        script:
            "../scripts/view.py"


rule reproduction_figure:
    input:
        res("figures/{name}.png"),
    output:
        f"docs/reproduction/{config['preset']}/figures/{{name}}.png",
    log:
        res("logs/reproduction_figure/{name}.log"),
    benchmark:
        res("benchmarks/reproduction_figure/{name}.tsv")
    wildcard_constraints:
        name="p00[0-9]_[a-z0-9_]+|compare_[a-z0-9_-]+|audit",
    localrule: True
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=200,
        runtime=5,
    shell:
        "(cp {input} {output}.tmp && mv {output}.tmp {output}) 2> {log}"


rule reproduction_page:
    input:
        unpack(D.page_inputs),
    output:
        f"docs/reproduction/{config['preset']}/{{page}}.md",
    log:
        res("logs/reproduction_page/{page}.log"),
    benchmark:
        res("benchmarks/reproduction_page/{page}.tsv")
    wildcard_constraints:
        page="|".join(D.PAGES + D.EXTRA_PAGES),
    localrule: True
    conda:
        "../envs/pipelib.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code("reproduction_page.py"),
        module=lambda wc: page_module(wc.page),
        preset=config["preset"],
        audit_fractions=config["audit"]["fractions"],
        commands={
            name: D.preset_command(target)
            for name, target in page_command_targets(res, config["preset"]).items()
        },
    script:
        "../scripts/reproduction_page.py"
