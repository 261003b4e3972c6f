"""LoRA SFT on chat rows: the anchor's hyperparameters by default, an adapter and a run manifest.

Needs the optional `[train]` extra (`pip install 'speedproof[train]'`); without it `train` raises
`TrainExtraMissing` naming the extra. The internal validation partition is cut by case id before
anything else, so copies of one case (focus, replay) never sit on both sides. Loss is computed on
the assistant tokens only.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from speedproof.corpus.errors import CorpusError, TrainExtraMissing
from speedproof.corpus.jsonl import sha256_file
from speedproof.corpus.sft import read_sft

EXTRA_MODULES = ("torch", "transformers", "peft", "datasets")
ADAPTER = "adapter"
RUN_MANIFEST = "run.json"


@dataclass(frozen=True)
class TrainConfig:
    """Defaults are the anchor's release recipe (LoRA r16/a32, lr 5e-5, 4x4 batch, 1 epoch)."""

    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    learning_rate: float = 5e-5
    batch_size: int = 4
    grad_accum: int = 4
    epochs: float = 1.0
    seed: int = 7
    max_length: int = 2048
    val_fraction: float = 0.05
    target_modules: str = "all-linear"


def require_extra() -> None:
    missing = []
    for name in EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise TrainExtraMissing(
            f"`fn train` needs the optional [train] extra; missing: {', '.join(missing)}. "
            "Install it with: pip install 'speedproof[train]' (torch 2.13.0, CPU wheel)"
        )


def partition(rows: Sequence[Mapping[str, Any]], fraction: float, seed: int) -> tuple[
    list[Mapping[str, Any]], list[Mapping[str, Any]]
]:  # fmt: skip
    """(train, validation) rows, cut by case id: every row of a case lands on one side."""
    ids = sorted({str(r["case_id"]) for r in rows})
    ranked = sorted(ids, key=lambda cid: hashlib.sha256(f"{seed}:{cid}".encode()).hexdigest())
    held = set(ranked[: int(len(ranked) * fraction)])
    return (
        [r for r in rows if str(r["case_id"]) not in held],
        [r for r in rows if str(r["case_id"]) in held],
    )


def _encode(tokenizer: Any, row: Mapping[str, Any], max_length: int) -> dict[str, list[int]]:
    messages = list(row["messages"])
    if not messages or messages[-1]["role"] != "assistant":
        raise CorpusError(f"SFT row of case {row.get('case_id')} does not end with an answer")
    prompt = tokenizer.apply_chat_template(
        messages[:-1], tokenize=False, add_generation_prompt=True
    )
    full = tokenizer.apply_chat_template(messages, tokenize=False)
    if not full.startswith(prompt):
        raise CorpusError("the tokenizer's chat template renders the prompt differently alone")
    prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    answer_ids = tokenizer(full[len(prompt) :], add_special_tokens=False)["input_ids"]
    ids = (prompt_ids + answer_ids)[:max_length]
    labels = ([-100] * len(prompt_ids) + answer_ids)[:max_length]
    return {"input_ids": ids, "labels": labels, "attention_mask": [1] * len(ids)}


class _Collator:
    def __init__(self, pad_id: int) -> None:
        self.pad_id = pad_id

    def __call__(self, batch: list[dict[str, list[int]]]) -> dict[str, Any]:
        import torch

        width = max(len(b["input_ids"]) for b in batch)

        def pad(key: str, value: int) -> Any:
            return torch.tensor([b[key] + [value] * (width - len(b[key])) for b in batch])

        return {
            "input_ids": pad("input_ids", self.pad_id),
            "labels": pad("labels", -100),
            "attention_mask": pad("attention_mask", 0),
        }


def _versions() -> dict[str, str]:
    return {name: str(importlib.import_module(name).__version__) for name in EXTRA_MODULES}


def train(sft_path: Path, base_model: str, out: Path, config: TrainConfig) -> dict[str, Any]:
    """Fine-tune a LoRA adapter on the SFT file; writes `adapter/` and `run.json` into `out`."""
    require_extra()
    import datasets
    import peft
    import transformers

    started = time.time()
    transformers.set_seed(config.seed)
    rows = read_sft(sft_path)
    if not rows:
        raise CorpusError(f"{sft_path} holds no SFT rows")
    train_rows, val_rows = partition(rows, config.val_fraction, config.seed)
    tokenizer = transformers.AutoTokenizer.from_pretrained(base_model)
    if not getattr(tokenizer, "chat_template", None):
        raise CorpusError(f"the tokenizer of {base_model} has no chat template")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    base: Any = transformers.AutoModelForCausalLM.from_pretrained(base_model)
    lora = peft.LoraConfig(
        r=config.rank,
        lora_alpha=config.alpha,
        lora_dropout=config.dropout,
        target_modules=config.target_modules,
        task_type="CAUSAL_LM",
    )
    model: Any = peft.get_peft_model(base, lora)

    def encoded(part: list[Mapping[str, Any]]) -> Any:
        return datasets.Dataset.from_list([_encode(tokenizer, r, config.max_length) for r in part])

    args = transformers.TrainingArguments(
        output_dir=str(out / "checkpoints"),
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate,
        num_train_epochs=config.epochs,
        seed=config.seed,
        data_seed=config.seed,
        save_strategy="no",
        eval_strategy="no",
        logging_steps=1,
        report_to=[],
        disable_tqdm=True,
        dataloader_pin_memory=False,
    )
    trainer = transformers.Trainer(
        model=model,
        args=args,
        data_collator=_Collator(int(tokenizer.pad_token_id)),
        train_dataset=encoded(train_rows),
        eval_dataset=encoded(val_rows) if val_rows else None,
    )
    result = trainer.train()
    val_loss = trainer.evaluate()["eval_loss"] if val_rows else None
    adapter = out / ADAPTER
    model.save_pretrained(str(adapter))
    manifest = {
        "base_model": base_model,
        "sft_file": str(sft_path),
        "sft_sha256": sha256_file(sft_path),
        "hyperparameters": asdict(config),
        "rows": {"train": len(train_rows), "validation": len(val_rows)},
        "validation_case_ids": sorted({str(r["case_id"]) for r in val_rows}),
        "train_loss": float(result.training_loss),
        "validation_loss": None if val_loss is None else float(val_loss),
        "steps": int(result.global_step),
        "duration_s": round(time.time() - started, 3),
        "versions": _versions(),
        "adapter_files": {p.name: sha256_file(p) for p in sorted(adapter.iterdir()) if p.is_file()},
    }
    (out / RUN_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest
