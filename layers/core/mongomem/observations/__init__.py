"""Observational memory (ADR 0050): a per-user log of dated observations, written from each snapshot in the
background (`service.ObservationService.observe`), kept within a token budget by the reflector
(`log.reflect`) and read as one stable block by the context source `observations` (`log.render`)."""
