"""Exceptions and warnings raised by the data layer."""


class DataConfigError(ValueError):
    """A dataset entry in ``config.yaml`` is malformed (unknown key, bad value)."""


class ChecksumError(ValueError):
    """A raw file's sha256 differs from the pinned one, or the file is truncated."""


class DataFormatError(ValueError):
    """A raw file does not parse as its entry's ``format:`` (or parses into something that is not a data set:
    no feature columns, rows of different widths, a label per row). The message names the file and format."""


class DataUnavailableError(FileNotFoundError):
    """A raw file is in neither the mirror nor ``raw_dir`` and could not be downloaded."""


class DataWarning(UserWarning):
    """Something the user should know about a dataset (e.g. a checksum pinned on first use)."""
