"""python3 -m tcforge_torch COMMAND ...: the package's commands.

    run CONFIG       input bit strings on stdin, one a line (character i is
                     input bit i), output bit strings on stdout; also
                     `python3 -m tcforge_torch CONFIG`
    module CONFIG    write the bytes-in, digest-out module of a stock model
                     or a decoder as TorchScript (CONFIG's name with .pt)
                     and ONNX (.onnx)
    train CONFIG ... train a model of its shape (tcforge_torch/train.py, its
                     own arguments; docs/learnability.md)

Each command is one entry of COMMANDS: (help line, add_arguments(parser),
main(args) -> exit status). A new command adds a function pair and an entry.

Errors are one line on stderr, "tcforge_torch: ERROR: …", exit status 1
(2 for a usage error); --debug (or TCFORGE_DEBUG=1) adds the traceback.
SIGTERM and SIGINT end a command as an error does (files it was writing
are removed or marked), with exit status 143 and 130.
"""

import hashlib
import os
import signal
import sys
import traceback

from . import ArgumentParser, FormatError, Signalled, UsageError, load, read_regular


def _run_args(p):
    p.add_argument("config", help="the model's JSON config (from tcforge run --export)")


def _run(args):
    import torch

    m = load(args.config)
    lines = [l.strip() for l in sys.stdin if l.strip()]
    for i, l in enumerate(lines):
        if len(l) != m.inputs or set(l) - {"0", "1"}:
            raise FormatError(f"input line {i + 1}: want {m.inputs} bits of 0/1, got {len(l)} characters")
    bits = torch.tensor([[int(c) for c in l] for l in lines], dtype=torch.uint8).reshape(len(lines), m.inputs)
    out = m.run(bits)
    sys.stdout.write("".join("".join(str(int(b)) for b in row) + "\n" for row in out.tolist()))
    return 0


def _module_args(p):
    p.add_argument("config", help="a stock model's or a decoder's JSON config (tokens-as-states or decoder, from tcforge run --export)")
    p.add_argument("-o", "--out", help="output path without extension (default: CONFIG without .json)")
    p.add_argument("--no-onnx", action="store_true", help="write only the TorchScript file")


def _module(args):
    from . import decoder, digest

    base = args.out or (args.config[:-len(".json")] if args.config.endswith(".json") else args.config)
    folder = os.path.dirname(os.path.abspath(base))
    if not os.path.isdir(folder):
        raise FormatError(f"{base}: the directory {folder} does not exist")
    targets = [base + ".pt"] + ([] if args.no_onnx else [base + ".onnx"])
    for path in targets:
        if os.path.lexists(path) and not digest.written_here(path):
            raise FormatError(f"{path} exists and is not a byte module tcforge_torch wrote: not replaced (remove it, or give -o)")
    _remove_dead_temps(folder, [os.path.basename(base) + ext for ext in (".pt", ".onnx")])
    m = load(args.config)
    if isinstance(m, decoder.DecoderModel):
        mod = decoder.decoder_module(m)
        checked = decoder.check_module(mod, m)
        save_pt, save_onnx = decoder.save_torchscript, decoder.save_onnx
    else:
        mod = digest.digest_module(m)
        checked = digest.check_module(mod, m)
        save_pt, save_onnx = digest.save_torchscript, digest.save_onnx
    del m  # the loader's tensors: the module holds its own
    provenance = {"format": "tcforge-byte-module", "config": os.path.basename(args.config),
                  "config_sha256": hashlib.sha256(read_regular(args.config, "config", 1 << 30)).hexdigest(), "checked": checked}
    save_pt(mod, base + ".pt", provenance)
    if not args.no_onnx:
        save_onnx(mod, base + ".onnx", provenance)
    elif digest.written_here(base + ".onnx"):
        os.unlink(base + ".onnx")  # an earlier model's, stale beside the new .pt
    for path in targets:
        print(path)
    return 0


def _remove_dead_temps(folder, names):
    """Removes the temporary files (atomic_write's .NAME.tmp-PID) of names
    left in folder by a writer that was killed: those whose process is
    gone."""
    for entry in os.listdir(folder):
        for name in names:
            prefix = f".{name}.tmp-"
            if entry.startswith(prefix) and entry[len(prefix):].isdigit():
                try:
                    os.kill(int(entry[len(prefix):]), 0)
                except ProcessLookupError:
                    os.unlink(os.path.join(folder, entry))
                except OSError:
                    pass  # alive (another user's): left alone


COMMANDS = {
    "run": ("run a model on input bit strings (stdin) and print its output bits", _run_args, _run),
    "module": ("write a stock model's or a decoder's bytes-in, digest-out module (.pt TorchScript, .onnx)", _module_args, _module),
}


def parser():
    """The argument parser of every command."""
    p = ArgumentParser(prog="python3 -m tcforge_torch",
                       description="Run and convert the models `tcforge run --export DIR` writes (docs/export.md).")
    p.add_argument("--debug", action="store_true", help="on an error, print the traceback too (also TCFORGE_DEBUG=1)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_line, add_args, fn) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_line, description=help_line)
        add_args(sp)
        sp.set_defaults(fn=fn)
    for name, (help_line, _) in DELEGATED.items():
        sub.add_parser(name, help=help_line, add_help=False)
    return p


# Commands with their own argument parsers: name -> (help line, module).
DELEGATED = {"train": ("train a model of an export's shape (python3 -m tcforge_torch train --help)", "train")}


def _on_signal(signum, frame):
    # Once: a second signal while the command unwinds is ignored (the
    # command's own cleanup must not be cut short).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise Signalled(signum)


def _debug(args):
    return "--debug" in args or os.environ.get("TCFORGE_DEBUG", "") not in ("", "0")


def error(msg, args=()):
    """Prints the one-line error (the traceback first with --debug or
    TCFORGE_DEBUG=1)."""
    if _debug(args):
        traceback.print_exc()
    lines = [l for l in str(msg).split("\n") if l.strip()]
    line = " ".join(lines[0].split()) if lines else "failed"
    print(f"tcforge_torch: ERROR: {line}", file=sys.stderr)


def main(argv):
    args = [a for a in argv[1:] if a != "--debug"]
    for s in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(s) is not signal.SIG_IGN:  # a background job's SIGINT stays ignored
            signal.signal(s, _on_signal)
    try:
        if args and args[0] in DELEGATED:
            import importlib

            mod = importlib.import_module("." + DELEGATED[args[0]][1], __package__)
            return mod.main(args[1:])
        if args and args[0] not in COMMANDS and not args[0].startswith("-"):
            args = ["run"] + args  # python3 -m tcforge_torch CONFIG
        p = parser()
        ns = p.parse_args(args)
        if ns.command is None:
            p.print_usage(sys.stderr)
            return 2
        return ns.fn(ns)
    except UsageError as e:
        error(e, argv)
        return 2
    except SystemExit as e:  # argparse's --help (0)
        return e.code if isinstance(e.code, int) else 2
    except Signalled as e:
        error(f"stopped by {e}", argv)
        return 128 + e.signum
    except KeyboardInterrupt:
        error("stopped by SIGINT", argv)
        return 130
    except (FormatError, OSError, ValueError) as e:
        error(e, argv)
        return 1
    except MemoryError:
        error("out of memory", argv)
        return 1
    except Exception as e:  # a defect: named by its type, traceback with --debug
        error(f"{type(e).__name__}: {e} (an internal error; --debug shows where)", argv)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
