"""Running the app for many visitors: replicas behind nginx.

nginx.conf    the site: session affinity by cookie, websockets, uploads
replicas.py   `python -m deploy.replicas`: N replicas and nginx as plain processes
ports.py      the ports it needs, checked before it starts anything
supervisor.py its replicas: each proves it answers its port, restarts wait longer each time
identity.py   how a replica proves it (a route of the app's)
"""
