"""Report figures drawn from the tables in results/tables (PNG and PDF, stamped with data set, profile and
number of seeds)."""
