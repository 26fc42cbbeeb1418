"""What keeps a server's visitors served, apart from what they learn (mlp/ knows nothing of them).

turns     one process's live frames take turns, fairly by the CPU each visitor has used
jobs      training in the background: jobs, their views, one bounded executor per process
frames    the route a playing plane fetches its frames from (not through Streamlit reruns), its
          streams and their leases
live      fragments redrawn on a timer, taking turns with every other visitor's; the heartbeat
"""
