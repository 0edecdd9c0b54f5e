"""What the server shows of itself: metrics, request spans, the inspector."""
