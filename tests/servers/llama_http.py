"""llama.cpp's own HTTP server (from ``xllamacpp``) on 127.0.0.1, serving a GGUF with its chat
template, as a user runs a local model: ``python llama_http.py MODEL.gguf PORT [TEMPERATURE
[MAX_TOKENS]]`` (defaults for requests that name none; llama.cpp's own otherwise: 0.8, and no
limit but the context). Prints its address once it answers, then serves until it is killed."""

from __future__ import annotations

import os
import sys
import time
import urllib.request

import xllamacpp


def main(path: str, port: int, temperature: float | None = None, max_tokens: int | None = None) -> None:
    params = xllamacpp.CommonParams()
    if temperature is not None:
        params.sampling.temp = temperature
    if max_tokens is not None:
        params.n_predict = max_tokens
    params.model.path = path
    params.n_ctx = 8192
    params.n_parallel = 1
    params.use_jinja = True  # the model's own chat template, tools included
    params.hostnames = ["127.0.0.1"]
    params.port = port
    threads = int(os.environ.get("LLAMA_THREADS", "2"))  # 1 beside other work on two cores
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = -1
    server = xllamacpp.Server(params)
    address = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{address}/health", timeout=1) as reply:
                if reply.status == 200:
                    break
        except OSError:
            time.sleep(0.1)
    print(address, flush=True)
    while server is not None:
        time.sleep(3600)


if __name__ == "__main__":
    options = [*sys.argv[3:], None, None]
    temperature, max_tokens = options[0], options[1]
    main(sys.argv[1], int(sys.argv[2]), temperature and float(temperature), max_tokens and int(max_tokens))
