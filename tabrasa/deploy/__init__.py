"""Using a trained run: predictions on raw files (`load(run).predict`), and export to ONNX."""

from tabrasa.deploy.onnx_export import export_onnx
from tabrasa.deploy.predictor import Predictor, load
from tabrasa.deploy.run import TrainedRun, load_run

__all__ = ["Predictor", "TrainedRun", "export_onnx", "load", "load_run"]
