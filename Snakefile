# treeopt: reproduce four papers on decision trees beyond greedy induction.
#   snakemake --cores 2                        # default profile (offline data, a few minutes)
#   snakemake --cores 2 --config profile=paper # the papers' data sets and grids
# See workflow/README.md.

configfile: "config.yaml"


include: "workflow/rules/common.smk"


rule all:
    input:
        PLAN.targets(),
    default_target: True


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/report.smk"
