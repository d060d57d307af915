"""The experiment layer's configuration error and its "unknown name" message, shared by the config checks
(``config``) and the plan (``plan``) without either importing the other."""

import difflib


class ConfigError(ValueError):
    """config.yaml is invalid; the message says where and why."""


def name_error(kind, name, known, where):
    """``where: unknown KIND 'name' (did you mean ...?); known: ...``"""
    hint = difflib.get_close_matches(name, known, n=1)
    return (f"{where}: unknown {kind} {name!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
            + f"; known: {', '.join(sorted(known)) or 'none'}")
