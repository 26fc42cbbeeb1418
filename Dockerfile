# MLP Playground in a container: CPU-only PyTorch, run as a user without privileges.
#
#   docker build -t mlp-playground .
#   docker run -p 8501:8501 mlp-playground
#
# Several replicas (README, "Hosting"): run one container per replica with the same
# STREAMLIT_SERVER_COOKIE_SECRET and put a load balancer with session affinity in front
# (deploy/nginx.conf).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# PyTorch's CPU wheel first: PyPI's default torch for Linux brings CUDA (~3 GB) whether or not
# there is a GPU. Installed first, it satisfies requirements.txt's torch>=2.10.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY requirements.txt /app/requirements.txt
RUN pip install -r /app/requirements.txt

# The code belongs to root and the app can't change it; its home holds the MNIST cache.
RUN useradd --create-home --uid 10001 app
WORKDIR /app
COPY app.py ./
COPY .streamlit/ .streamlit/
COPY pages/ pages/
COPY mlp/ mlp/
COPY deploy/ deploy/
USER app

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]
CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501"]
