"""Planning: ``config.yaml`` (checked) turned into the jobs of a profile, named by what they are.

The config and its checks (``config``, ``config_lines``, ``values``), the method and report registries
(``methods``, ``reports``), run identities and folder names (``params``, ``identity``), the papers' printed numbers
the config's data sets are matched to (``paper_values``), and the plan itself: its specs, inherited parameters, tree
blocks and the planner (``build``). Nothing here fits a model or writes a file; it imports no other room of
:mod:`treeopt.experiments`.
"""
