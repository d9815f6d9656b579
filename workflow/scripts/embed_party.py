"""Rule embed_party: a party embeds its own records with the public encoder."""

from pipelib.logs import to_log

to_log(snakemake)
p, i = snakemake.params, snakemake.input
if p.settings["kind"] == "hog":  # no model to load: the job stays free of torch (docs/development.md, "Imports")
    from pipelib.features import embed_hog as embed

    fitted = {}
else:
    from pipelib.represent import embed_table as embed

    fitted = {"model_paths": list(i.model), "device": p.device, "threads": snakemake.threads}
embed(settings=p.settings, images_path=i.party, out_npy=snakemake.output[0], **fitted)
