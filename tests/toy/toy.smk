# The toy paper method (tests/toy/toymethod.py): the parties' randomized responses, the server's row (its
# table's rule comes from its registry entry, like every table's: workflow/rules/report.smk).
from toymethod import ToyDesign, ToyRun

D.add("toy", ToyDesign)


rule toy_answers:
    input:
        party=lambda wc: party_table(wc.scenario, wc.party),
    output:
        answers=res("toy/{scenario}/{run}/party-{party}.npy"),
        guarantee=res("toy/{scenario}/{run}/party-{party}.guarantee.json"),
    log:
        res("logs/toy/{scenario}/{run}/party-{party}.log"),
    wildcard_constraints:
        run=ToyRun.PATTERN,
    params:
        seed=lambda wc: seed_of(wc.scenario),
        preset=config["preset"],
    script:
        "../scripts/toy.py"


rule toy_server:
    input:
        answers=lambda wc: [
            res(f"toy/{wc.scenario}/{wc.run}/party-{i}.npy") for i in party_ids(wc.scenario)
        ],
    output:
        result=res("toy/{scenario}/{run}/result.json"),
    log:
        res("logs/toy/{scenario}/{run}/server.log"),
    wildcard_constraints:
        run=ToyRun.PATTERN,
    params:
        seed=lambda wc: seed_of(wc.scenario),
        preset=config["preset"],
    script:
        "../scripts/toy.py"
