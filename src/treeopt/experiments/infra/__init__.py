"""The machinery around the jobs: what a job costs and asks a scheduler for (``cost``, ``resources``, with the
measured ``cost_model.yaml``), numba kernels compiled before a timed fit and warmed up while waiting (``warmup``,
``precompile``), and a job's log file and SLURM job (``joblog``). Imports only :mod:`treeopt.experiments.plan`.
"""
