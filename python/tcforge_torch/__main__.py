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
"""

import argparse
import os
import sys

from . import FormatError, load


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
    from . import decoder, digest, onnxgraph

    m = load(args.config)
    if isinstance(m, decoder.DecoderModel):
        mod, save_pt, save_onnx = decoder.decoder_module(m), decoder.save_torchscript, onnxgraph.write_decoder_onnx
    else:
        mod, save_pt, save_onnx = digest.digest_module(m), digest.save_torchscript, digest.save_onnx
    del m  # the loader's tensors: the module holds its own
    base = args.out or (args.config[:-len(".json")] if args.config.endswith(".json") else args.config)
    save_pt(mod, base + ".pt")
    print(base + ".pt")
    if not args.no_onnx:
        save_onnx(mod, base + ".onnx")
        print(base + ".onnx")
    return 0


COMMANDS = {
    "run": ("run a model on input bit strings (stdin) and print its output bits", _run_args, _run),
    "module": ("write a stock model's or a decoder's bytes-in, digest-out module (.pt TorchScript, .onnx)", _module_args, _module),
}


def parser():
    """The argument parser of every command."""
    p = argparse.ArgumentParser(prog="python3 -m tcforge_torch",
                                description="Run and convert the models `tcforge run --export DIR` writes (docs/export.md).")
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


def main(argv):
    args = argv[1:]
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
    try:
        return ns.fn(ns)
    except (FormatError, OSError, ValueError) as e:
        print(f"tcforge_torch: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
