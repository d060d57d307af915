# treeopt: reproduce four papers on decision trees beyond greedy induction.
#   snakemake --cores 2                        # default profile (offline data, a few minutes)
#   snakemake --cores 2 --config profile=paper # the papers' data sets and grids
# See workflow/README.md.


from treeopt.experiments.report.scorecard_pages import report_intro


configfile: "config.yaml"


# the report opens on the profile's scorecard table when it has one (treeopt.experiments.report.scorecard_pages)
report: report_intro("workflow/report/workflow.rst", config) if workflow.is_main_process else "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"


rule all:
    default_target: True
    input:
        PLAN.targets(),


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/report.smk"
