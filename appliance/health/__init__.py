"""Whether each part of a device can do its job, one line each: the checks `appliance doctor`
and the web Health page share (one module per family of parts)."""
