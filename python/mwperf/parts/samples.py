"""The samples part (``--samples``): the measuring agent writes every sample; one file for a
single topic (samples.csv), one per topic otherwise (``samples.<topic>.csv``), one per client
of a service point with several (``samples.client_<i>.csv``)."""

from typing import TYPE_CHECKING, Any

from ..topicnames import SAMPLES_NAME, samples_files
from .base import Part

if TYPE_CHECKING:
    from ..point import Point
    from .state import PointState


class Samples(Part):
    name = "samples"

    def wanted(self, cfg: "Point") -> bool:
        return cfg.samples

    def files(self, run: "PointState") -> dict[str, Any]:
        names = samples_files(run.cfg)
        if names == [SAMPLES_NAME]:
            single = run.workdir / SAMPLES_NAME
            return {"samples_path": single} if single.is_file() else {}
        return {"topic_samples": {i: run.workdir / name for i, name in enumerate(names)
                                  if (run.workdir / name).is_file()}}
