"""Fits on distributed collections (contract §9): one planner for every
engine (:mod:`.planner`) that runs the core's plan of each column, whose
passes engines run over partitions (:mod:`.engine`, :mod:`.steps`), and
the Spark engine (:mod:`.spark_engine`) with its Structured Streaming
scorer (:mod:`.spark_stream`). The public adapters :mod:`outprob.dask`
and :mod:`outprob.spark` sit on top.

It imports :mod:`outprob._common`, :mod:`outprob.streaming`,
:mod:`outprob._scalers` and the compiled core; Dask, Spark and pyarrow
only through :mod:`outprob._common.optional` or inside the engine that
needs them.
"""
