"""``pytest-niah audit URL#MODEL``: what an embedding endpoint really does, in a minute.

Exit codes: 0 audited (with ``--expect``: the same deployment); 1 with ``--expect``, the
deployment changed (another model, dtype, window or dimension), or an output could not be
written; 2 a usage error, a saved audit that cannot be read, or an endpoint that cannot be
audited (unreachable, refusing every request).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pytest_niah.cli.common import EXIT_FAILED, EXIT_OK
from pytest_niah.errors import CliError, NiahError

REMOTE_PREFIX = "openai+"
_EXAMPLES = {"json": "audit.json", "markdown": "audit.md", "save": "deployment.json"}


def add_audit(commands: Any) -> None:
    """Register ``audit`` on the command parser."""
    parser = commands.add_parser(
        "audit",
        help="audit a served embedding model: window, determinism, speed, fingerprint",
        description=(
            "Audit an OpenAI-compatible embeddings endpoint: its declared and measured window "
            "and what it does past it, determinism, its vectors, the largest batch, latency "
            "and tokens/s, a tiny needle check, and the deployment's fingerprint."
        ),
        epilog=(
            "Exit codes: 0 audited (with --expect: the same deployment), 1 the deployment "
            "changed since --expect's audit or an output could not be written, 2 a usage "
            "error or an endpoint that cannot be audited."
        ),
    )
    parser.add_argument(
        "address",
        metavar="URL#MODEL",
        help="the served model, as --niah-model takes it: openai+http(s)://HOST:PORT/v1#MODEL "
        "(the openai+ prefix may be left out)",
    )
    _add_endpoint_options(parser)
    _add_output_options(parser)
    parser.set_defaults(handler=run_audit_command)


def _add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    """The served model's tokenizer and window, the transport's limits, the batch tried."""
    from pytest_niah.config.options import default

    parser.add_argument(
        "--tokenizer",
        default="",
        help="the served model's tokenizer, as "
        "--niah-tokenizer takes it (default: the model's preset's)",
    )
    parser.add_argument(
        "--max-seq-length",
        type=_positive_int,
        default=None,
        metavar="N",
        help="the window to assume, special tokens included (default: the "
        "server's max_model_len, the preset's, or the tokenizer folder's)",
    )
    parser.add_argument(
        "--api-key-env",
        default=default("api_key_env"),
        metavar="VAR",
        help="the environment variable holding the API key (default %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=default("remote_timeout"),
        metavar="S",
        help="seconds to wait for one response (as --niah-remote-timeout; default %(default)s)",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=default("remote_concurrency"),
        metavar="N",
        help="requests in flight when timing concurrent requests (as "
        "--niah-remote-concurrency; default %(default)s)",
    )
    parser.add_argument(
        "--retries",
        type=_count,
        default=5,
        metavar="N",
        help="further tries of a request that failed in a way worth retrying "
        "(408, 429, 5xx, timeouts), as a run's (default %(default)s)",
    )
    parser.add_argument(
        "--max-batch",
        type=_positive_int,
        default=128,
        metavar="N",
        help="the largest batch tried (default %(default)s)",
    )


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    """The files written, and the saved audit compared with."""
    parser.add_argument("--json", metavar="FILE", help="write every finding as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the table as markdown")
    parser.add_argument("--save", metavar="FILE", help="write the deployment's fingerprint")
    parser.add_argument(
        "--expect",
        metavar="FILE",
        help="compare with a saved audit (--save "
        "or --json file); exit 1 when the deployment changed",
    )


def run_audit_command(args: argparse.Namespace) -> int:
    """Audit the endpoint, print the table, write the files, compare with ``--expect``."""
    from pytest_niah.audit.audit_report import audit_json, changes_text, markdown, table
    from pytest_niah.audit.audit_run import run_audit
    from pytest_niah.audit.deployment import changes, read_fingerprint
    from pytest_niah.audit.endpoint import in_audit_terms
    from pytest_niah.cli.common import write_files

    settings = _settings(args)
    outputs = {name: _output(name, getattr(args, name)) for name in ("json", "markdown", "save")}
    saved = read_fingerprint(args.expect) if args.expect is not None else None
    try:
        audit = run_audit(settings)
    except NiahError as exc:
        raise CliError(in_audit_terms(exc.problem), in_audit_terms(exc.hint)) from None
    changed = changes(saved, audit.fingerprint) if saved is not None else None
    sys.stdout.write(table(audit))
    if changed is not None:
        sys.stdout.write(changes_text(changed))
    import json

    texts = {
        "json": audit_json(audit, changed),
        "markdown": markdown(audit, changed),
        "save": json.dumps(audit.fingerprint.to_dict(), indent=1) + "\n",
    }
    for name, path in outputs.items():
        if path is not None:
            write_files(path.parent, {path.name: texts[name]})
            sys.stdout.write(f"wrote {path}\n")
    sys.stdout.flush()
    return EXIT_FAILED if changed else EXIT_OK


def _settings(args: argparse.Namespace) -> Any:
    from pytest_niah.audit.endpoint import AuditSettings

    address = args.address.strip()
    if not address:
        raise CliError(
            "the address is empty (an unset variable?)",
            "give the served model as openai+http(s)://HOST:PORT/v1#MODEL",
        )
    if not address.startswith(REMOTE_PREFIX) and address.startswith(("http://", "https://")):
        address = REMOTE_PREFIX + address
    if not address.startswith(REMOTE_PREFIX):
        raise CliError(
            "the address is not a served model's (it must start with openai+http or http)",
            "give the served model as openai+http(s)://HOST:PORT/v1#MODEL",
        )
    return AuditSettings(
        address=address,
        tokenizer=args.tokenizer,
        max_seq_length=args.max_seq_length,
        api_key_env=args.api_key_env,
        timeout=args.timeout,
        concurrency=args.concurrency,
        retries=args.retries,
        max_batch=args.max_batch,
    )


def _output(option: str, value: str | None) -> Path | None:
    """An output path, refused before any request when it cannot be written."""
    if value is None:
        return None
    if not value.strip():
        raise CliError(
            f"--{option}: the file name is empty (an unset variable?)",
            f"give the file to write, e.g. --{option} {_EXAMPLES[option]}",
        )
    path = Path(value)
    if path.is_dir():
        raise CliError(f"--{option}: {value!r} is a folder", "give a file name")
    if not path.parent.is_dir():
        raise CliError(
            f"--{option}: the folder of {value!r} does not exist", "create it, or give another path"
        )
    return path


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be 1 or more")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value
