"""``reference/tabletop``: a pixel-only reference policy for demos and regression tests. NOT a VLM.

It plays every stage of every agent (EviSeek's demands, plan, seek, keep, answer, coverage and
triage calls; Single-model's steps and forced choice; Passive's one answer) so that the whole
system can be run end to end on a laptop with no GPU and no API key, and so that changes to the
agents or the harness show up as changes in a reproducible score.

What it may use is what a vision-language model gets: the prompt's text (the question, the
answer contract, the agent's own pose estimate, actions and their feedback), the images attached
to the call, and the request metadata that repeats structured parts of the prompt
(``GenerateConfig.stage``, ``response_schema``, ``metadata``). It never touches the simulator:
no ground truth, no masks, no object poses. It does not import ``eviseek.envs``.

How it works, in three parts:

* :mod:`.vision` labels pixels with colour words by chromaticity and cuts them into blobs;
* :mod:`.shapes` tells cubes, cylinders, balls, cones and pyramids apart from a blob's flat
  shading, top width and outline fill;
* :mod:`.solve` answers each kind of tabletop question from blob geometry in the most useful
  image (collinearity, side ratios, pixel gaps, areas, counts, shape votes), and
  :mod:`.policy` chooses where to look next (rise and look straight down for layouts and counts,
  circle past a board for a hidden object, change elevation for a look-alike shape), spoken as
  EviSeek's intents (:mod:`.intents`) or Single-model's atomic actions (:mod:`.atomic`).

:mod:`.model` routes each agent stage to its handler (:mod:`.answering`, :mod:`.single_model`,
:mod:`.planning`, :mod:`.seeking`), each reading one :class:`~.request.Request`.

Its prototypes and thresholds were set by looking at renders from generator seeds outside the
dev and test splits. Accuracy therefore says how informative the views an agent gathered are
for a simple, fixed perception, which is what makes it useful as a regression reference; it says
nothing about how a real VLM would do.
"""

from eviseek.models.reference.model import MODEL_ID, ReferenceModel, estimate_input_tokens

__all__ = ["MODEL_ID", "ReferenceModel", "estimate_input_tokens"]
