"""Rule ldpdl_student: the server's student of one AQS iteration, and the next iteration's queries."""

from pipelib.logs import to_log

to_log(snakemake)
from pipelib.methods.ldpdl import student_iteration  # noqa: E402

w, p, i, o = snakemake.wildcards, snakemake.params, snakemake.input, snakemake.output
student_iteration(
    run={
        "scenario": w.scenario,
        "mechanism": w.ldmech,
        "key": f"{w.scenario}/{w.ldmech}-eps{w.eps}-q{w.nq}-{w.design}-{w.qs}",
        "plan_key": f"{w.scenario}/q{w.nq}/{w.design}",
        "design": w.design,
    },
    iteration=int(w.iteration),
    plan_path=i.plan,
    queries_paths=list(i.queries),
    release_paths=list(i.releases),
    guarantee_paths=list(i.guarantees),
    record_paths=list(i.records),
    public_path=i.public,
    test_path=i.test,
    settings=p.settings,
    loss=p.loss,
    aqs=w.qs == "aqs",
    device=p.device,
    threads=snakemake.threads,
    seed=p.seed,
    preset=p.preset,
    randomness=p.randomness,
    out_result=o.result,
    out_next=o.next,
    out_model=o.model,
    out_owners=o.owners,
)
