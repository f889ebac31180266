"""The technique registry: every named technique, as typed objects that transform the roofline."""
