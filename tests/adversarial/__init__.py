"""The standing adversarial suite (issue 11): hostile packages, servers, archives and inputs."""
