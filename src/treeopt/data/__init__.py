"""Datasets for the four papers: registry, download and verification, parsing, splits.

The workflow calls exactly these:

- :func:`load_config_datasets` validates the ``datasets:`` entries of ``config.yaml``;
- :func:`prepare_split` makes ``{processed_dir}/{name}/split{seed}.npz``;
- :func:`load_split` reads it back as a :class:`Split`;
- :func:`availability` says whether a dataset is generated, bundled, cached, read from
  the mirror, or would be downloaded.

``python -m treeopt.data prepare|status`` exposes the same from the command line.
"""

from .errors import ChecksumError, DataConfigError, DataFormatError, DataUnavailableError, DataWarning
from .prepare import Split, availability, load_split, prepare_split, split_path
from .spec import DatasetSpec, DataSettings, FileSpec, data_settings, load_config_datasets
from .synthetic import make_rgf_synthetic

__all__ = [
    "ChecksumError", "DataConfigError", "DataFormatError", "DataUnavailableError", "DataWarning", "DataSettings",
    "DatasetSpec", "FileSpec", "Split", "availability", "data_settings", "load_config_datasets",
    "load_split", "make_rgf_synthetic", "prepare_split", "split_path",
]
