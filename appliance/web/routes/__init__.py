"""The caregiver page's routes, one router per concern; `appliance.web.app` includes them all."""
