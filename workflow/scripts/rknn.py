"""Rules of reverse k-NN labeling (workflow/rules/rknn.smk): one entry point, dispatched on the rule name."""
from pipelib.logs import to_log

to_log(snakemake.log[0])
from pipelib import report, rknn  # noqa: E402

sm = snakemake
w, p, i, o = sm.wildcards, sm.params, sm.input, sm.output
rule = sm.rule
if rule == "train_encoder":
    rknn.train_encoder(w.encoder, p.settings, i.public_index, i.public_data, p.seed, p.device, sm.threads, o[0],
                       checkpoint=p.checkpoint)
elif rule == "embed_public":
    rknn.embed_public(p.settings, i.public_index, i.public_data, (i.model or [None])[0], p.device, sm.threads, o[0])
elif rule == "embed_party":
    rknn.embed_party(p.settings, i.party, (i.model or [None])[0], p.device, sm.threads, o[0])
elif rule == "cluster":
    rknn.cluster(i[0], int(w.s), p.seed, p.iterations, o.centers, o.assign)
elif rule == "party_votes":
    rknn.party_votes(i.party, i.embeddings, i.centers, int(w.k), o[0])
elif rule == "party_local_answer":
    rknn.party_local_answer(i.party, i.embeddings, i.centers, int(w.k), w.lmech, p.seed, int(w.party), o[0])
elif rule == "curate":
    rknn.curate(list(i), w.cmech, int(w.k), p.seed, o[0])
elif rule == "aggregate_local":
    rknn.aggregate_local(list(i), o[0])
elif rule == "label_queries":
    rknn.label_queries(i.counts, i.assign, o[0])
elif rule == "student":
    rknn.student(i.labels, i.public_index, i.public_data, i.test, p.settings, p.device, sm.threads, p.seed, o[0],
                 label_accuracy=p.same_labels, checkpoint=p.checkpoint)
elif rule == "table_rknn":
    report.table_rknn(p.rows, list(i), p.preset, p.seeds, o[0])
else:
    raise ValueError(f"rknn.py does not handle rule {rule!r}")
