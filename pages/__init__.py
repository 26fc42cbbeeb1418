"""The app's pages, one file each; pages/ui/ holds what they share. Streamlit never lists this file."""
