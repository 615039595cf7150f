"""Training AutoTool: rewards (``rewards``), Adaptive Mode Balancing (``amb``), data (``data``),
and the TRL / verl integrations. Submodules are imported explicitly; this package stays light."""
