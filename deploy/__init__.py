"""Running the app for many visitors: replicas behind nginx (deploy/nginx.conf, deploy/replicas.py)."""
