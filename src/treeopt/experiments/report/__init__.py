"""Reporting: final runs read into the report tables, figures drawn from the tables (by :mod:`treeopt.plots`), the
reproduction scorecard and the report's captions. Reads run folders from disk; imports only the rooms below it
(:mod:`treeopt.experiments.plan`, ``infra``, ``run``).
"""
