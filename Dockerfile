# MLP Playground in a container: CPU-only PyTorch, run as a user without privileges.
#
#   docker build -t mlp-playground .
#   docker run -p 8501:8501 mlp-playground
#
# Several replicas (docs/hosting.md): run one container per replica with the same
# STREAMLIT_SERVER_COOKIE_SECRET and put a load balancer with session affinity in front:
# deploy/compose.yaml (nginx and 3 replicas), deploy/kubernetes.yaml (an Ingress with a cookie).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Exact versions, each file checked against its hash (docs/hosting.md, "What the image installs").
# PyTorch's CPU wheel first, from PyTorch's index: PyPI's torch for Linux brings CUDA (~3 GB)
# whether or not there is a GPU. Then everything else, torch's dependencies included, from PyPI.
COPY requirements-torch-cpu.lock requirements.lock /app/
RUN pip install --no-deps --require-hashes -r /app/requirements-torch-cpu.lock \
    && pip install --require-hashes -r /app/requirements.lock \
    && pip check

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
