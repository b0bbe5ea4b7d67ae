"""Serving a trained run over HTTP on LitServe: `tabrasa serve --run RUN` (docs/serve.md).

api.py          the LitAPI: decode each request, predict dynamic batches, answer JSON
requests.py     a request body → one checked raw example (what is refused, and why)
refusals.py     the 4xx answer: a status and a one-line message
guard.py        size, content type and parse checks before LitServe reads a body
model.py        the served tasks of a run (PyTorch or ONNX Runtime), one Predictor each
joint.py        one task of a joint run as a single-task model
onnx_backend.py the exported graph behind the module interface the Predictor calls
attention.py    the attention view the page draws
server.py       the LitServer, the page at `/`, SIGTERM
command.py      the command-line options and entry point
page/           the page: index.html, app.js, style.css (no build step)
"""
