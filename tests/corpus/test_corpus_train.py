"""LoRA SFT end to end on a tiny randomly initialised Llama built here (no download).

Needs the [train] extra (`pip install -e '.[train]'`). Without it this test FAILS, naming the
install step; set SPEEDPROOF_ALLOW_NO_TRAIN_EXTRA=1 to turn that into a visible skip instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedproof.corpus.train import RUN_MANIFEST, partition, require_extra
from support.corpus import fn_app


def _require_extra() -> None:
    try:
        require_extra()
    except Exception as err:  # TrainExtraMissing
        if os.environ.get("SPEEDPROOF_ALLOW_NO_TRAIN_EXTRA") == "1":
            pytest.skip(f"train extra missing and explicitly allowed: {err}")
        pytest.fail(f"{err} (Makefile: `$(BIN)/pip install -q -e '.[dev,train]'`)")


def _tiny_model(folder: Path) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|end|>", "<|pad|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(["def solve(xs):\n    return len(set(xs))\n"] * 4, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>"
    )
    tokenizer.chat_template = (
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}<|end|>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    tokenizer.save_pretrained(folder)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


def _rows(path: Path, cases: int) -> Path:
    rows = []
    for i in range(cases):
        for copy in range(2):  # two rows per case: a focus copy must stay on its case's side
            rows.append(
                {
                    "case_id": f"fam.t.{i}",
                    "family": "fam",
                    "template": "fam.t",
                    "source": "teacher" if copy == 0 else "focus",
                    "messages": [
                        {"role": "system", "content": "rules"},
                        {
                            "role": "user",
                            "content": f"```python\ndef solve(xs):\n    return {i}\n```",
                        },
                        {
                            "role": "assistant",
                            "content": "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
                        },
                    ],
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_validation_partition_is_cut_by_case_id_so_copies_never_straddle_it() -> None:
    rows = [{"case_id": f"c{i % 10}", "n": i} for i in range(40)]
    train, val = partition(rows, 0.3, seed=7)
    assert {r["case_id"] for r in train}.isdisjoint({r["case_id"] for r in val})
    assert len({r["case_id"] for r in val}) == 3
    assert partition(rows, 0.3, seed=7) == (train, val)


# 10 s of real LoRA training; the partition and the missing-extra message stay in `make test`.
@pytest.mark.slow
def test_fn_train_writes_a_lora_adapter_and_a_run_manifest(tmp_path: Path) -> None:
    _require_extra()
    model = _tiny_model(tmp_path / "model")
    sft = _rows(tmp_path / "sft.jsonl", cases=10)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        fn_app(),
        ["train", "--sft", str(sft), "--base-model", str(model), "--out", str(out),
         "--batch", "2", "--grad-accum", "2", "--val-fraction", "0.2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / RUN_MANIFEST).read_text())
    assert (out / "adapter" / "adapter_model.safetensors").stat().st_size > 0
    adapter_config = json.loads((out / "adapter" / "adapter_config.json").read_text())
    assert (adapter_config["r"], adapter_config["lora_alpha"]) == (16, 32)
    assert adapter_config["lora_dropout"] == 0.05
    hp = manifest["hyperparameters"]
    assert (hp["learning_rate"], hp["epochs"], hp["seed"]) == (5e-5, 1.0, 7)
    assert manifest["rows"] == {"train": 16, "validation": 4}
    assert manifest["steps"] == 4
    assert manifest["validation_loss"] is not None
    assert set(manifest["adapter_files"]) >= {"adapter_model.safetensors", "adapter_config.json"}


def test_without_the_train_extra_fn_train_fails_naming_the_extra(tmp_path: Path) -> None:
    # A real interpreter in which `peft` cannot be imported, as on a machine without the extra.
    script = (
        "import sys; sys.modules['peft'] = None\n"
        "from typer.testing import CliRunner\n"
        "import typer\n"
        "from speedproof.corpus.cli import register\n"
        "app = typer.Typer(); register(app)\n"
        "r = CliRunner().invoke(app, ['train', '--sft', 'x.jsonl', '--base-model', 'm', "
        "'--out', 'o'])\n"
        "print(r.exit_code); print(r.output)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    code, _, output = done.stdout.partition("\n")
    assert code == "3"
    assert "[train] extra" in output and "peft" in output
