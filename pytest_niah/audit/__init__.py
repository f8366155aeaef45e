"""``pytest-niah audit``: what an embedding endpoint really does, measured in a minute.

The audit asks a served model (``openai+http(s)://HOST:PORT/v1#MODEL``, the address
``--niah-model`` takes) the questions a team asks whenever a deployment changes, each
answered by a module of its own:

- :mod:`~pytest_niah.audit.endpoint`: the endpoint, its requests and the tokens sent (bounded);
- :mod:`~pytest_niah.audit.determinism`: the same batch twice, other batch-mates, the vectors;
- :mod:`~pytest_niah.audit.past_window`: the declared and the measured window, and what
  happens past it;
- :mod:`~pytest_niah.audit.throughput`: the largest batch accepted, latency and tokens/s;
- :mod:`~pytest_niah.audit.needle_check`: a handful of built-in needles, found or not;
- :mod:`~pytest_niah.audit.deployment`: the deployment's fingerprint and what changed;
- :mod:`~pytest_niah.audit.audit_run` runs them, :mod:`~pytest_niah.audit.audit_report`
  writes the table, the markdown and the JSON.

It reuses what a run measures before its grid (the noise check, the window probe) and the
served model's transport (retries, secrets). The command is
:mod:`pytest_niah.cli.audit_command`.
"""
