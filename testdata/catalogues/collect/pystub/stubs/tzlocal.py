def get_localzone_name(): return 'UTC'
