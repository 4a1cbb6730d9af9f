"""Run tracing: spans built from run events, the trace store and OTLP export (imports graphs.events only)."""
